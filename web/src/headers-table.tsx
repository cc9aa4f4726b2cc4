/**
 * Request headers as a two-column table (name, value in code).
 *
 * @example
 * ```tsx
 * <HeadersTable headers={[["content-type", "application/json"]]} />
 * ```
 */
export function HeadersTable(props: { headers: ReadonlyArray<readonly [string, string]> }) {
  return (
    <table class="headers">
      <tbody>
        {props.headers.map(([name, value]) => (
          <tr>
            <th>{name}</th>
            <td>
              <code>{value}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
