/**
 * Where JSON text stops being valid: the offset of the first character a JSON parser refuses
 * (the text's length when it ends too early), or null when it is valid. `JSON.parse` names a
 * position only for some mistakes, so a config error could not always say where it is.
 *
 * @example
 * ```ts
 * jsonErrorOffset('{"a": tru}'); // 9
 * ```
 */
export function jsonErrorOffset(text: string): number | null {
  let i = 0;
  const fail = (at = i): never => {
    throw at;
  };
  const space = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    for (const char of word) if (text[i++] !== char) fail(i - 1);
  };
  const string = () => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) fail();
      const char = text[i]!;
      if (char === '"') {
        i++;
        return;
      }
      if (char < " ") fail();
      if (char === "\\") {
        const next = text[i + 1];
        if (next === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail(i + 1);
          i += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
        else fail(i + 1);
      } else i++;
    }
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!match || match[0] === "" || match[0] === "-") fail();
    i += match![0].length;
  };
  const value = (): void => {
    space();
    const char = text[i];
    if (char === "{") {
      i++;
      space();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail();
        string();
        space();
        if (text[i] !== ":") fail();
        i++;
        value();
        space();
        if (text[i] === ",") i++;
        else if (text[i] === "}") {
          i++;
          return;
        } else fail();
      }
    }
    if (char === "[") {
      i++;
      space();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        space();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          return;
        } else fail();
      }
    }
    if (char === '"') string();
    else if (char === "t") literal("true");
    else if (char === "f") literal("false");
    else if (char === "n") literal("null");
    else if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) number();
    else fail();
  };
  try {
    value();
    space();
    return i < text.length ? i : null;
  } catch (at) {
    return Math.min(at as number, text.length);
  }
}

/**
 * The 1-based line and column of an offset in text.
 *
 * @example
 * ```ts
 * lineAndColumn("{\n  x", 4); // { line: 2, column: 3 }
 * ```
 */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}
