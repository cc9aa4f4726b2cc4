-- 012: hookinbox_audit_append_leaves, 011's append with a prefix per leaf, so one call appends
-- leaves of both kinds in the batch's order: a new event's leaf (version 1) and a duplicate's
-- receipt leaf (version 2, src/audit/receipt-leaf.ts; its audit_leaves.event_id holds the
-- receipt's id). Everything else is 011's loop unchanged; 011's function stays for gateways of
-- the previous version during a rolling upgrade. Never edit after it lands.
CREATE FUNCTION hookinbox_audit_append_leaves(leaf_ids text[], prefixes bytea[], rests bytea[])
RETURNS bigint
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  tree_size bigint;
  frontier_hashes bytea;
  cur bytea;
  lvl integer;
  i integer;
  leaf_seqs bigint[] := '{}';
  leaf_hashes bytea[] := '{}';
  node_levels smallint[] := '{}';
  node_indexes bigint[] := '{}';
  node_hashes bytea[] := '{}';
BEGIN
  SELECT size, frontier INTO tree_size, frontier_hashes FROM audit_tree WHERE id = 1 FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'audit_tree row is missing';
  END IF;
  FOR i IN 1 .. coalesce(array_length(leaf_ids, 1), 0) LOOP
    cur := sha256(prefixes[i] || int8send(tree_size) || rests[i]);
    leaf_seqs := leaf_seqs || tree_size;
    leaf_hashes := leaf_hashes || cur;
    lvl := 0;
    WHILE ((tree_size >> lvl) & 1) = 1 LOOP
      cur := sha256(decode('01', 'hex') || substring(frontier_hashes FROM length(frontier_hashes) - 31) || cur);
      frontier_hashes := substring(frontier_hashes FROM 1 FOR length(frontier_hashes) - 32);
      lvl := lvl + 1;
      node_levels := node_levels || lvl::smallint;
      node_indexes := node_indexes || ((tree_size + 1) / (1::bigint << lvl) - 1);
      node_hashes := node_hashes || cur;
    END LOOP;
    frontier_hashes := frontier_hashes || cur;
    tree_size := tree_size + 1;
  END LOOP;
  INSERT INTO audit_leaves (seq, event_id, hash) SELECT * FROM unnest(leaf_seqs, leaf_ids, leaf_hashes);
  INSERT INTO audit_nodes (level, idx, hash) SELECT * FROM unnest(node_levels, node_indexes, node_hashes);
  UPDATE audit_tree SET size = tree_size, frontier = frontier_hashes WHERE id = 1;
  RETURN tree_size;
END
$$;
