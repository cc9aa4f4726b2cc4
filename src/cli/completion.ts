import type { Command, Option } from "commander";

/** One node of the command tree: its path, subcommands, options and which options take a value. */
interface Node {
  readonly path: string;
  readonly commands: string[];
  readonly flags: string[];
  readonly valued: string[];
}

function nodes(command: Command, path = ""): Node[] {
  const options: readonly Option[] = command.options;
  const flags = options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
  const valued = options
    .filter((o) => o.required || o.optional)
    .flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
  const children = command.commands.filter((c) => c.name() !== "help");
  return [
    {
      path,
      commands: children.map((c) => c.name()),
      flags: [...flags, "--help"],
      valued,
    },
    ...children.flatMap((c) => nodes(c, path === "" ? c.name() : `${path} ${c.name()}`)),
  ];
}

const cases = (all: Node[], pick: (n: Node) => string[]) =>
  all.map((n) => `    "${n.path}") echo "${pick(n).join(" ")}" ;;`).join("\n");

/**
 * A bash completion script for the program, generated from commander's command tree (every
 * command, subcommand and option, so it never falls behind). zsh loads the same script through
 * `bashcompinit`.
 *
 * @example
 * ```ts
 * process.stdout.write(completionScript(program, "bash")); // eval "$(hookinbox completion bash)"
 * ```
 */
export function completionScript(program: Command, shell: "bash" | "zsh"): string {
  const all = nodes(program);
  const bash = `# hookinbox completion (${shell}); generated from the command tree by \`hookinbox completion ${shell}\`
_hookinbox_commands() {
  case "$1" in
${cases(all, (n) => n.commands)}
  esac
}
_hookinbox_flags() {
  case "$1" in
${cases(all, (n) => n.flags)}
  esac
}
_hookinbox_valued() {
  case "$1" in
${cases(all, (n) => n.valued)}
  esac
}
_hookinbox() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" word i skip=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    if [[ "$word" == -* ]]; then
      [[ " $(_hookinbox_valued "$path") " == *" $word "* ]] && skip=1
      continue
    fi
    [[ " $(_hookinbox_commands "$path") " == *" $word "* ]] && path="\${path:+$path }$word"
  done
  if ((skip)); then COMPREPLY=($(compgen -f -- "$cur")); return 0; fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_hookinbox_flags "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_hookinbox_commands "$path")" -- "$cur"))
  fi
}
complete -F _hookinbox hookinbox
`;
  if (shell === "bash") return bash;
  return `#compdef hookinbox\nautoload -U +X bashcompinit && bashcompinit\n${bash}`;
}
