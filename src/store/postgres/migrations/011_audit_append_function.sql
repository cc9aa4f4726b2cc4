-- 011: one call appends a batch of leaves to the audit log, so the tree row is locked only
-- inside PostgreSQL: the accept transaction sends this call and its COMMIT in one message
-- (postgres/audit.ts), instead of locking the row, waiting for the gateway to hash the leaves
-- and write them, and then committing, three trips through a busy gateway's event loop while
-- every other accept waited for the row.
--
-- The gateway sends, per leaf, the leaf's encoding after its sequence number (`rests`) and, once,
-- the bytes before it (`prefix`: the RFC 6962 leaf prefix 0x00 and the encoding's version
-- byte). The function numbers the leaves from the tree's size, hashes each as
-- SHA-256(prefix || seq as 8 bytes big-endian || rest), and appends it to the compact range in
-- audit_tree.frontier (one 32-byte hash per set bit of the size, largest subtree first), storing
-- every subtree it closes as SHA-256(0x01 || left || right). src/audit/compact-range.ts is the
-- same append; the audit tests check the two against each other through proofs and verify.
-- Never edit after it lands.
CREATE FUNCTION hookinbox_audit_append(event_ids text[], prefix bytea, rests bytea[])
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
  FOR i IN 1 .. coalesce(array_length(event_ids, 1), 0) LOOP
    cur := sha256(prefix || int8send(tree_size) || rests[i]);
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
  INSERT INTO audit_leaves (seq, event_id, hash) SELECT * FROM unnest(leaf_seqs, event_ids, leaf_hashes);
  INSERT INTO audit_nodes (level, idx, hash) SELECT * FROM unnest(node_levels, node_indexes, node_hashes);
  UPDATE audit_tree SET size = tree_size, frontier = frontier_hashes WHERE id = 1;
  RETURN tree_size;
END
$$;
