// Shell completion scripts for bash, zsh and fish, generated from the CLI's own description
// (cmd/cli_doc.h). Each script finds the command path typed so far ("plumb bmc inventory"),
// then offers that command's subcommands, its options, the values of the option before the
// cursor (a --format's set, directories for --repo, files for the rest) and, for --limit and
// a NODE argument, the cluster repo's node names and @groups (`plumb __nodes`, hidden).
#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cmd/cli_doc.h"
#include "modules/transport/shell.h"

namespace plumb::cmd {

namespace {

// What the word after an option (or a positional) completes to. kFree: a value nothing here
// can list (a run id, a git ref, a name): the completion offers nothing rather than files.
enum class ValueKind { kNone, kChoices, kNodes, kDirectory, kFile, kFree };

bool Named(const OptionDoc& o, std::initializer_list<std::string_view> names) {
  for (const std::string& n : o.names)
    for (std::string_view want : names)
      if (n == want) return true;
  return false;
}

ValueKind KindOf(const OptionDoc& o) {
  if (!o.positional && o.value.empty()) return ValueKind::kNone;   // a flag
  if (!o.choices.empty()) return ValueKind::kChoices;
  const std::string& n = o.names.front();
  if (Named(o, {"--limit", "--node"}) || (o.positional && n.find("node") != std::string::npos))
    return ValueKind::kNodes;
  if (n == "--repo") return ValueKind::kDirectory;
  if (Named(o, {"--ref", "--resume", "--retry-failed", "--force-unlock", "--dead-owner", "--since",
                "--approved-by", "--operator", "--trust-policy-from", "--type", "--last"}) ||
      (o.positional && (n == "run" || n.rfind("REV", 0) == 0)))
    return ValueKind::kFree;
  if (o.value == "INT" || o.value == "UINT" || o.value == "FLOAT") return ValueKind::kFree;
  return ValueKind::kFile;
}

void Walk(const CommandDoc& c, const std::function<void(const CommandDoc&)>& f) {
  f(c);
  for (const CommandDoc& s : c.subcommands) Walk(s, f);
}

// Words of the scripts are single-quoted as for sh (bash, zsh and fish read 'it'\''s' alike).
std::string SingleQuoted(std::string_view s) { return transport::ShellQuote(s); }

std::string Words(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, " ")); }

std::vector<std::string> OptionNames(const CommandDoc& c) {
  std::vector<std::string> out;
  for (const OptionDoc& o : c.options)
    if (!o.positional)
      for (const std::string& n : o.names) out.push_back(n);
  return out;
}

std::vector<std::string> SubcommandNames(const CommandDoc& c) {
  std::vector<std::string> out;
  for (const CommandDoc& s : c.subcommands) out.push_back(s.path.substr(c.path.size() + 1));
  return out;
}

const OptionDoc* Positional(const CommandDoc& c) {
  for (const OptionDoc& o : c.options)
    if (o.positional) return &o;
  return nullptr;
}

// What a command's positional arguments complete to, for the scripts' `pos`: "nodes",
// "files", "words:a b c" (its set of values) or nothing (the first positional decides); and
// how many there are (`npos`), so none is offered once they are all typed.
std::string PositionalWords(const CommandDoc& c) {
  const OptionDoc* p = Positional(c);
  if (p == nullptr) return "''";
  switch (KindOf(*p)) {
    case ValueKind::kNodes: return "nodes";
    case ValueKind::kChoices: return SingleQuoted("words:" + Words(p->choices));
    case ValueKind::kFree: return "''";
    default: return "files";
  }
}

int PositionalCount(const CommandDoc& c) {
  int n = 0;
  for (const OptionDoc& o : c.options) n += o.positional ? 1 : 0;
  return n;
}

// Options that take a value, " --repo --ref " (blank-delimited for a pattern match): the word
// after one is its value, not a positional argument.
std::string ValueOptions(const CommandDoc& c) {
  std::string out = " ";
  for (const OptionDoc& o : c.options)
    if (!o.positional && !o.value.empty())
      for (const std::string& n : o.names) out += n + " ";
  return out;
}

// Every command path but the root, as a case pattern: 'plumb plan'|'plumb bmc'|...
std::string PathPattern(const CommandDoc& root, const char* open, const char* close) {
  std::string out;
  Walk(root, [&](const CommandDoc& c) {
    if (&c != &root) out += (out.empty() ? "" : "|") + SingleQuoted(c.path);
  });
  return open + out + close;
}

}  // namespace

std::string BashCompletion(const CommandDoc& root) {
  std::string values, commands;
  Walk(root, [&](const CommandDoc& c) {
    for (const OptionDoc& o : c.options) {
      if (o.positional) continue;
      for (const std::string& n : o.names) {
        const std::string pat = SingleQuoted(c.path + "|" + n);
        switch (KindOf(o)) {
          case ValueKind::kNone: break;
          case ValueKind::kChoices:
            values += fmt::format("    {}) __plumb_reply -W {} ;;\n", pat, SingleQuoted(Words(o.choices)));
            break;
          case ValueKind::kNodes: values += fmt::format("    {}) __plumb_complete_nodes ;;\n", pat); break;
          case ValueKind::kDirectory: values += fmt::format("    {}) __plumb_files -d ;;\n", pat); break;
          case ValueKind::kFile: values += fmt::format("    {}) __plumb_files -f ;;\n", pat); break;
          case ValueKind::kFree: values += fmt::format("    {}) ;;\n", pat); break;
        }
      }
    }
    commands += fmt::format("    {}) subs={}; opts={}; vopts={}; pos={}; npos={} ;;\n",
                            SingleQuoted(c.path), SingleQuoted(Words(SubcommandNames(c))),
                            SingleQuoted(Words(OptionNames(c))), SingleQuoted(ValueOptions(c)),
                            PositionalWords(c), PositionalCount(c));
  });
  return fmt::format(R"SH(# bash completion for plumb. Generated by `plumb completion bash` from the CLI's own
# definition (the one --help prints): regenerate it rather than edit it.
#   source <(plumb completion bash)      or install it as
#   /usr/share/bash-completion/completions/plumb

# COMPREPLY from compgen ARGS for $cur, one reply a line: no word splitting, no globbing.
__plumb_reply() {{
  mapfile -t COMPREPLY < <(compgen "$@" -- "$cur")
}}

# File or directory names (-f / -d), quoted by bash as file names are.
__plumb_files() {{
  compopt -o filenames 2>/dev/null
  __plumb_reply "$1"
}}

# Node names and @groups of the cluster repo the command line names (--repo DIR or
# --repo=DIR; else the one plumb finds from ., as every command does).
__plumb_nodes() {{
  local -a repo=()
  local i
  for ((i = 1; i < ${{#__plumb_words[@]}} - 1; i++)); do
    case ${{__plumb_words[i]}} in
      --repo) repo=(--repo "${{__plumb_words[i + 1]}}") ;;
      --repo=*) repo=(--repo "${{__plumb_words[i]#--repo=}}") ;;
    esac
  done
  command plumb __nodes "${{repo[@]}}" 2>/dev/null
}}

# A --limit value is a comma list of patterns, each maybe negated: complete the last one.
__plumb_complete_nodes() {{
  local head= tail=$cur neg=
  if [[ $cur == *,* ]]; then head=${{cur%,*}},; tail=${{cur##*,}}; fi
  if [[ $tail == '!'* ]]; then neg='!'; tail=${{tail#!}}; fi
  mapfile -t COMPREPLY < <(compgen -P "$head$neg" -W "$(__plumb_nodes)" -- "$tail")
}}

_plumb() {{
  # The words split at blanks only: bash's COMP_WORDS are split at COMP_WORDBREAKS too ('=',
  # '@', ':'), which would cut --format=json and @group in two.
  local line=${{COMP_LINE:0:COMP_POINT}} cur prev optprefix= cmdpath=plumb pathend=0 i
  local -a __plumb_words
  read -ra __plumb_words <<<"$line"
  [[ -z $line || $line == *[[:blank:]] ]] && __plumb_words+=("")
  local n=${{#__plumb_words[@]}}
  local full=${{__plumb_words[n - 1]}}
  prev=${{__plumb_words[n - 2]:-}}
  cur=$full
  if [[ $full == --*=* ]]; then prev=${{full%%=*}}; optprefix=$prev=; cur=${{full#*=}}; fi
  for ((i = 1; i < n - 1; i++)); do
    case "$cmdpath ${{__plumb_words[i]}}" in
      {}) cmdpath="$cmdpath ${{__plumb_words[i]}}"; pathend=$i ;;
    esac
  done
  COMPREPLY=()
  local subs= opts= vopts= pos= npos=0 done=0
  case "$cmdpath" in
{}  esac
  if [[ -n $optprefix || $vopts == *" $prev "* ]]; then
    case "$cmdpath|$prev" in
{}    esac
  elif [[ $cur == -* ]]; then
    __plumb_reply -W "$opts"
  elif [[ -n $subs ]]; then
    __plumb_reply -W "$subs"
  else
    # Positionals already typed: words after the command path that are no option or value.
    for ((i = pathend + 1; i < n - 1; i++)); do
      [[ ${{__plumb_words[i]}} == -* || $vopts == *" ${{__plumb_words[i - 1]}} "* ]] || ((done++))
    done
    if ((done < npos)); then
      case $pos in
        nodes) __plumb_complete_nodes ;;
        files) __plumb_files -f ;;
        words:*) __plumb_reply -W "${{pos#words:}}" ;;
      esac
    fi
  fi
  # Readline replaces only its own word, what follows the last COMP_WORDBREAKS character
  # ('--format=' or 'gpu001,@' stay): the replies lose that head.
  local rl=${{COMP_WORDS[COMP_CWORD]}}
  [[ ${{#rl}} == 1 && $COMP_WORDBREAKS == *"$rl"* ]] && rl=
  local strip=${{full%"$rl"}} c
  if [[ -n $strip ]]; then
    for i in "${{!COMPREPLY[@]}}"; do
      c=$optprefix${{COMPREPLY[i]}}
      COMPREPLY[i]=${{c#"$strip"}}
    done
  fi
}}
complete -F _plumb plumb
)SH",
                     PathPattern(root, "", ""), commands, values);
}

std::string ZshCompletion(const CommandDoc& root) {
  auto described = [](const std::string& name, const std::string& text) {
    std::string t;
    for (char ch : FirstLineOf(text)) t += ch == ':' ? std::string("\\:") : std::string(1, ch);
    return SingleQuoted(name + ":" + t);
  };
  std::string values, commands;
  Walk(root, [&](const CommandDoc& c) {
    std::string subs, opts;
    for (const CommandDoc& s : c.subcommands)
      subs += " " + described(s.path.substr(c.path.size() + 1), s.description);
    for (const OptionDoc& o : c.options) {
      if (o.positional) continue;
      for (const std::string& n : o.names) {
        opts += " " + described(n, o.description);
        const std::string pat = SingleQuoted(c.path + "|" + n);
        switch (KindOf(o)) {
          case ValueKind::kNone: break;
          case ValueKind::kChoices: values += fmt::format("      ({}) compadd -- {} ;;\n", pat, Words(o.choices)); break;
          case ValueKind::kNodes: values += fmt::format("      ({}) __plumb_complete_nodes ;;\n", pat); break;
          case ValueKind::kDirectory: values += fmt::format("      ({}) _files -/ ;;\n", pat); break;
          case ValueKind::kFile: values += fmt::format("      ({}) _files ;;\n", pat); break;
          case ValueKind::kFree: values += fmt::format("      ({}) ;;\n", pat); break;
        }
      }
    }
    commands += fmt::format("    ({}) subs=({}); opts=({}); vopts={}; pos={}; npos={} ;;\n",
                            SingleQuoted(c.path), subs, opts, SingleQuoted(ValueOptions(c)),
                            PositionalWords(c), PositionalCount(c));
  });
  // `path` is zsh's array tied to PATH: the command path is `cmdpath`.
  return fmt::format(R"SH(#compdef plumb
# zsh completion for plumb. Generated by `plumb completion zsh` from the CLI's own definition
# (the one --help prints): regenerate it rather than edit it. Install it as _plumb in a
# directory of $fpath, or: source <(plumb completion zsh)

# Node names and @groups of the cluster repo the command line names (--repo DIR or
# --repo=DIR; else the one plumb finds from ., as every command does). A --limit value is a
# comma list of patterns, each maybe negated: the last one is completed.
__plumb_complete_nodes() {{
  local -a repo
  local i
  for ((i = 2; i < CURRENT; i++)); do
    case $words[i] in
      (--repo) repo=(--repo "$words[i+1]") ;;
      (--repo=*) repo=(--repo "${{words[i]#--repo=}}") ;;
    esac
  done
  compset -P '*,'
  compset -P '!'
  compadd -- ${{(f)"$(command plumb __nodes "${{repo[@]}}" 2>/dev/null)"}}
}}

_plumb() {{
  local cmdpath=plumb pathend=1 i cur=$words[CURRENT] prev=$words[CURRENT-1] eq=
  if [[ $cur == --*=* ]]; then
    prev=${{cur%%=*}}; eq=1
    compset -P '*='
  fi
  for ((i = 2; i < CURRENT; i++)); do
    case "$cmdpath $words[i]" in
      ({}) cmdpath="$cmdpath $words[i]"; pathend=$i ;;
    esac
  done
  local -a subs opts
  local vopts= pos= npos=0 done=0
  case "$cmdpath" in
{}  esac
  if [[ -n $eq || $vopts == *" $prev "* ]]; then
    case "$cmdpath|$prev" in
{}    esac
  elif [[ $cur == -* ]]; then
    _describe option opts
  elif (( $#subs )); then
    _describe command subs
  else
    for ((i = pathend + 1; i < CURRENT; i++)); do
      [[ $words[i] == -* || $vopts == *" $words[i-1] "* ]] || ((done++))
    done
    if ((done < npos)); then
      case $pos in
        (nodes) __plumb_complete_nodes ;;
        (files) _files ;;
        (words:*) compadd -- ${{=pos#words:}} ;;
      esac
    fi
  fi
}}

if [[ "$funcstack[1]" == _plumb ]]; then
  _plumb "$@"
else
  compdef _plumb plumb
fi
)SH",
                     PathPattern(root, "", ""), commands, values);
}

std::string FishCompletion(const CommandDoc& root) {
  std::string out = R"SH(# fish completion for plumb. Generated by `plumb completion fish` from the CLI's own
# definition (the one --help prints): regenerate it rather than edit it. Install it as
# ~/.config/fish/completions/plumb.fish, or: plumb completion fish | source

# The command path typed so far: "plumb", "plumb bmc", "plumb bmc inventory".
function __plumb_path
    set -l cmdpath plumb
    for w in (commandline -opc)[2..-1]
        switch "$cmdpath $w"
            case )SH";
  std::string paths;
  Walk(root, [&](const CommandDoc& c) {
    if (&c != &root) paths += (paths.empty() ? "" : " ") + SingleQuoted(c.path);
  });
  out += paths + R"SH(
                set cmdpath "$cmdpath $w"
        end
    end
    echo $cmdpath
end

# Node names and @groups of the cluster repo the command line names (--repo DIR or
# --repo=DIR; else the one plumb finds from ., as every command does).
function __plumb_nodes
    set -l repo
    set -l words (commandline -opc)
    for i in (seq (count $words))
        if test "$words[$i]" = --repo; and test $i -lt (count $words)
            set repo --repo $words[(math $i + 1)]
        else if string match -q -- '--repo=*' $words[$i]
            set repo --repo (string replace -- '--repo=' '' $words[$i])
        end
    end
    command plumb __nodes $repo 2>/dev/null
end

complete -c plumb -f
)SH";
  Walk(root, [&](const CommandDoc& c) {
    // Fish runs (cmd) outside quotes only; __plumb_path prints one line, so one argument.
    const std::string when = SingleQuoted("test (__plumb_path) = " + SingleQuoted(c.path));
    for (const CommandDoc& s : c.subcommands)
      out += fmt::format("complete -c plumb -n {} -a {} -d {}\n", when,
                         SingleQuoted(s.path.substr(c.path.size() + 1)),
                         SingleQuoted(FirstLineOf(s.description)));
    for (const OptionDoc& o : c.options) {
      if (o.positional) {
        const ValueKind k = KindOf(o);
        out += fmt::format("complete -c plumb -n {} {}\n", when,
                           k == ValueKind::kNodes     ? std::string("-a '(__plumb_nodes)'")
                           : k == ValueKind::kChoices ? "-a " + SingleQuoted(Words(o.choices))
                                                      : std::string("-F"));
        continue;
      }
      std::string names;
      for (const std::string& n : o.names)
        names += n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1);
      std::string value;
      switch (KindOf(o)) {
        case ValueKind::kNone: break;
        case ValueKind::kChoices: value = " -x -a " + SingleQuoted(Words(o.choices)); break;
        case ValueKind::kNodes: value = " -x -a '(__plumb_nodes)'"; break;
        case ValueKind::kDirectory: value = " -x -a '(__fish_complete_directories)'"; break;
        case ValueKind::kFile: value = " -r -F"; break;
        case ValueKind::kFree: value = " -x"; break;
      }
      out += fmt::format("complete -c plumb -n {}{}{} -d {}\n", when, names, value,
                         SingleQuoted(FirstLineOf(o.description)));
    }
  });
  return out;
}

}  // namespace plumb::cmd
