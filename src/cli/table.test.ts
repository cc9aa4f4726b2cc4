import { describe, expect, it } from "vitest";
import { renderTable } from "./table.ts";
import { escapeControl } from "./terminal.ts";

describe("CLI tables", () => {
  it("escape control characters a sender put in a cell", () => {
    const table = renderTable(
      ["ID", "TYPE"],
      [["evt_1", "invoice\u001b[2J\u0007.paid\r\nevt_fake  forged\u202e"]],
    );
    expect(table).toBe(
      "ID     TYPE\nevt_1  invoice\\x1b[2J\\x07.paid\\x0d\\x0aevt_fake  forged\\u202e",
    );
    expect([...table].filter((c) => c !== "\n" && escapeControl(c) !== c)).toEqual([]);
    expect(escapeControl("plain.type")).toBe("plain.type");
  });
});
