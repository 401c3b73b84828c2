#!/usr/bin/env python3
"""Runs the CI recipes in examples/ci/ the way their CI would, so a recipe cannot rot.

  ci_recipe.py github WORKFLOW.yml --context CTX.json --workdir DIR --artefacts DIR [--shell PFX]
  ci_recipe.py gitlab .gitlab-ci.yml --variables VARS.json --workdir DIR --artefacts DIR [--shell PFX]

GitHub Actions: every job whose `if:` holds for the event in CTX runs, in file order; each step's
`run:` script goes to `bash --noprofile --norc -eo pipefail` with the env a runner would set
(workflow, job and step `env:`, `${{ ... }}` expressions from CTX and earlier steps' outputs,
GITHUB_OUTPUT, GITHUB_* variables). Three actions are played: actions/checkout (a clone of
$CI_TEST_ORIGIN at `with.ref`, else github.sha), actions/upload-artifact (copies `with.path`
to ARTEFACTS/<run id>/<name>/) and actions/download-artifact. Any other `uses:` fails the run:
the recipe and this runner must move together.

GitLab CI: the jobs whose `rules:` match VARS run in stage order; `before_script` + `script`
run as one `bash -eo pipefail` script with the global and job `variables`; `artifacts.paths`
are kept in ARTEFACTS/<CI_PIPELINE_ID>/<job>/.

python3's yaml is not installed here, so this reads the subset of YAML the recipes use: block
mappings and sequences, `|` and `|-` literal blocks, plain and quoted scalars, flow sequences
and mappings of scalars, comments. Anything else is an error naming the line.

Prints one line per job and step; exits with the first failing step's status (0 if none).
"""
import json
import os
import re
import shutil
import subprocess
import sys


# ---- a YAML subset -------------------------------------------------------------------------

class YamlError(Exception):
    pass


def _strip_comment(line):
    out, quote = [], None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            break
        out.append(c)
    return "".join(out).rstrip()


def _split_flow(text, lineno):
    items, depth, cur, quote = [], 0, [], None
    for c in text:
        if quote:
            cur.append(c)
            if c == quote:
                quote = None
            continue
        if c in "'\"":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        if c == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
            continue
        cur.append(c)
    if "".join(cur).strip():
        items.append("".join(cur).strip())
    return items


def _scalar(text, lineno):
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        return [_scalar(x, lineno) for x in _split_flow(t[1:-1], lineno)]
    if t.startswith("{") and t.endswith("}"):
        out = {}
        for item in _split_flow(t[1:-1], lineno):
            k, sep, v = item.partition(":")
            if not sep:
                raise YamlError("line %d: flow mapping entry without ':': %r" % (lineno, item))
            out[_scalar(k, lineno)] = _scalar(v, lineno)
        return out
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        body = t[1:-1]
        return body.replace("''", "'") if t[0] == "'" else bytes(body, "utf-8").decode("unicode_escape")
    if t in ("true", "false"):
        return t == "true"
    if t in ("", "~", "null"):
        return None
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    if t[:1] in "&*!%@`|>":
        raise YamlError("line %d: YAML feature outside the subset: %r" % (lineno, t))
    return t


def load_yaml(text):
    lines = []   # (lineno, indent, content) for non-blank lines; raw kept for literal blocks
    raw = text.split("\n")
    for n, line in enumerate(raw, 1):
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise YamlError("line %d: a tab in the indentation" % n)
    pos = [0]

    def peek():
        while pos[0] < len(raw):
            content = _strip_comment(raw[pos[0]])
            if content.strip():
                return pos[0], len(content) - len(content.lstrip()), content.strip()
            pos[0] += 1
        return None

    def literal(indent_min, keep):
        block, start = [], pos[0]
        ind = None
        while pos[0] < len(raw):
            line = raw[pos[0]]
            if line.strip() == "":
                block.append("")
                pos[0] += 1
                continue
            li = len(line) - len(line.lstrip())
            if ind is None:
                ind = li
            if li < ind or li < indent_min:
                break
            block.append(line[ind:])
            pos[0] += 1
        while block and block[-1] == "":
            block.pop()
        return "\n".join(block) + ("\n" if keep else "")

    def value_after(rest, indent, lineno):
        rest = rest.strip()
        if rest in ("|", "|-", "|+"):
            pos[0] += 1
            return literal(indent + 1, rest != "|-")
        if rest == "":
            pos[0] += 1
            nxt = peek()
            if nxt is None or nxt[1] < indent or (nxt[1] == indent and not nxt[2].startswith("- ")
                                                   and nxt[2] != "-"):
                return None
            return node(nxt[1])
        pos[0] += 1
        return _scalar(rest, lineno)

    def node(indent):
        first = peek()
        if first is None:
            return None
        if first[2].startswith("- ") or first[2] == "-":
            return seq(first[1])
        return mapping(first[1])

    def seq(indent):
        out = []
        while True:
            cur = peek()
            if cur is None or cur[1] != indent or not (cur[2].startswith("- ") or cur[2] == "-"):
                return out
            lineno, _, content = cur
            rest = content[1:].strip()
            if rest == "" or rest in ("|", "|-"):
                out.append(value_after(rest, indent, lineno + 1))
                continue
            m = re.match(r"^([A-Za-z0-9_.$/-]+|\"[^\"]*\"|'[^']*'):(\s|$)(.*)$", rest)
            if m and not rest.startswith("{"):
                # "- key: value" starts a mapping whose keys sit at indent + 2.
                raw[cur[0]] = " " * (indent + 2) + rest
                out.append(mapping(indent + 2))
            else:
                pos[0] += 1
                out.append(_scalar(rest, lineno + 1))

    def mapping(indent):
        out = {}
        while True:
            cur = peek()
            if cur is None or cur[1] < indent:
                return out
            lineno, ind, content = cur
            if ind != indent:
                raise YamlError("line %d: unexpected indentation" % (lineno + 1))
            if content.startswith("- "):
                return out
            m = re.match(r"^([^:'\"]+|\"[^\"]*\"|'[^']*'):(\s|$)(.*)$", content)
            if not m:
                raise YamlError("line %d: expected 'key: value', got %r" % (lineno + 1, content))
            key = _scalar(m.group(1), lineno + 1)
            if key in out:
                raise YamlError("line %d: duplicate key %r" % (lineno + 1, key))
            out[key] = value_after(m.group(3), indent, lineno + 1)

    result = node(0)
    if peek() is not None:
        raise YamlError("line %d: not read (indentation?)" % (pos[0] + 1))
    return result


# ---- running steps -------------------------------------------------------------------------

def lookup(ctx, path):
    cur = ctx
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return ""
    return cur


def gh_expr(expr, ctx):
    """The ${{ }} language as the recipes use it: paths, 'literals', ==, !=, &&, ||, always()."""
    expr = expr.strip()
    for op in ("||", "&&"):
        parts = _split_top(expr, op)
        if len(parts) > 1:
            vals = [gh_expr(p, ctx) for p in parts]
            return any(vals) if op == "||" else all(vals)
    for op in ("==", "!="):
        parts = _split_top(expr, op)
        if len(parts) == 2:
            a, b = (gh_expr(p, ctx) for p in parts)
            return (str(a) == str(b)) if op == "==" else (str(a) != str(b))
    if expr in ("always()", "success()", "true"):
        return True
    if expr == "false":
        return False
    if len(expr) >= 2 and expr[0] == expr[-1] == "'":
        return expr[1:-1]
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", expr):
        return lookup(ctx, expr)
    raise SystemExit("ci_recipe: expression outside what this runner knows: " + expr)


def _split_top(expr, op):
    parts, quote, cur, i = [], False, "", 0
    while i < len(expr):
        if expr[i] == "'":
            quote = not quote
        if not quote and expr.startswith(op, i):
            parts.append(cur)
            cur = ""
            i += len(op)
            continue
        cur += expr[i]
        i += 1
    parts.append(cur)
    return parts


def substitute(text, ctx):
    def one(m):
        v = gh_expr(m.group(1), ctx)
        return "true" if v is True else "false" if v is False else str(v)
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(text))


def run_script(script, env, cwd, shell_prefix, label):
    print("  -- %s" % label, flush=True)
    cmd = shell_prefix + ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script]
    return subprocess.run(cmd, env=env, cwd=cwd).returncode


def read_outputs(path):
    out = {}
    if os.path.exists(path):
        for line in open(path):
            k, sep, v = line.rstrip("\n").partition("=")
            if sep:
                out[k] = v
    return out


def copy_paths(paths, src_dir, dest_dir):
    os.makedirs(dest_dir, exist_ok=True)
    for p in paths:
        p = p.strip()
        if not p:
            continue
        src = os.path.join(src_dir, p)
        if not os.path.exists(src):
            raise SystemExit("ci_recipe: artefact path %s does not exist" % src)
        shutil.copy(src, os.path.join(dest_dir, os.path.basename(p)))


def run_github(args):
    wf = load_yaml(open(args.recipe).read())
    ctx = json.load(open(args.context))
    ctx.setdefault("env", {})
    run_id = str(ctx["github"]["run_id"])
    base_env = dict(os.environ)
    for k, v in (wf.get("env") or {}).items():
        base_env[k] = substitute(v, ctx)
    base_env.update({
        "GITHUB_ACTIONS": "true", "CI": "true",
        "GITHUB_SHA": ctx["github"]["sha"], "GITHUB_REF": ctx["github"].get("ref", ""),
        "GITHUB_EVENT_NAME": ctx["github"]["event_name"],
        "GITHUB_BASE_REF": ctx["github"].get("base_ref", ""),
        "GITHUB_REPOSITORY": ctx["github"]["repository"], "GITHUB_RUN_ID": run_id,
        "GITHUB_ACTOR": ctx["github"]["actor"], "GITHUB_SERVER_URL": "https://github.example",
    })
    base_env.update(ctx.get("runner_env", {}))   # what the test pins (journal, PATH)
    for name, job in wf["jobs"].items():
        cond = job.get("if", "true")
        if not gh_expr(str(cond).replace("${{", "").replace("}}", ""), ctx):
            print("job %s: skipped (if: %s)" % (name, cond), flush=True)
            continue
        print("job %s" % name, flush=True)
        work = os.path.join(args.workdir, name)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        ctx["steps"] = {}
        job_env = dict(base_env)
        for k, v in (job.get("env") or {}).items():
            job_env[k] = substitute(v, ctx)
        failed = 0
        for i, step in enumerate(job["steps"]):
            label = step.get("name") or step.get("uses") or "step %d" % i
            cond = step.get("if")
            if cond is not None and not gh_expr(str(cond).replace("${{", "").replace("}}", ""), ctx):
                print("  -- %s: skipped" % label)
                continue
            if failed and str(cond) != "always()":
                print("  -- %s: skipped (an earlier step failed)" % label)
                continue
            env = dict(job_env)
            out_file = os.path.join(args.workdir, "%s-%d.out" % (name, i))
            open(out_file, "w").close()
            env["GITHUB_OUTPUT"] = out_file
            for k, v in (step.get("env") or {}).items():
                env[k] = substitute(v, ctx)
            w = step.get("with") or {}
            uses = step.get("uses", "")
            if "run" in step:
                rc = run_script(substitute(step["run"], ctx), env, work, args.shell, label)
            elif uses.startswith("actions/checkout@"):
                ref = substitute(w.get("ref") or ctx["github"]["sha"], ctx)
                rc = subprocess.run(["git", "clone", "-q", os.environ["CI_TEST_ORIGIN"], "."], cwd=work).returncode
                rc = rc or subprocess.run(["git", "checkout", "-q", ref], cwd=work).returncode
                print("  -- %s: checked out %s" % (label, ref))
            elif uses.startswith("actions/upload-artifact@"):
                copy_paths(substitute(w["path"], ctx).split("\n"), work,
                           os.path.join(args.artefacts, run_id, substitute(w["name"], ctx)))
                print("  -- %s: kept %s" % (label, w["name"]))
                rc = 0
            elif uses.startswith("actions/download-artifact@"):
                src = os.path.join(args.artefacts, substitute(w.get("run-id", run_id), ctx),
                                   substitute(w["name"], ctx))
                dest = os.path.join(work, substitute(w.get("path", "."), ctx))
                shutil.copytree(src, dest, dirs_exist_ok=True)
                rc = 0
            else:
                raise SystemExit("ci_recipe: this runner does not play %r" % uses)
            if step.get("id"):
                ctx["steps"][step["id"]] = {"outputs": read_outputs(out_file)}
            if rc != 0:
                print("  -- %s: exit %d" % (label, rc), flush=True)
                failed = failed or rc
        if failed:
            return failed
    return 0


def gl_rule(expr, variables):
    """GitLab rules:if as the recipes use it: $VAR, "literal", ==, !=, &&, ||."""
    expr = expr.strip()
    for op in ("||", "&&"):
        parts = _split_top(expr.replace('"', "'"), op)
        if len(parts) > 1:
            vals = [gl_rule(p, variables) for p in parts]
            return any(vals) if op == "||" else all(vals)
    for op in ("==", "!="):
        parts = _split_top(expr.replace('"', "'"), op)
        if len(parts) == 2:
            a, b = (_gl_value(p, variables) for p in parts)
            return (a == b) if op == "==" else (a != b)
    return bool(_gl_value(expr, variables))


def _gl_value(t, variables):
    t = t.strip()
    if t.startswith("$"):
        return variables.get(t[1:], "")
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    raise SystemExit("ci_recipe: rule outside what this runner knows: " + t)


def run_gitlab(args):
    ci = load_yaml(open(args.recipe).read())
    variables = json.load(open(args.variables))
    pipeline = str(variables["CI_PIPELINE_ID"])
    stages = ci.get("stages", ["build", "test", "deploy"])
    global_vars = {k: str(v) for k, v in (ci.get("variables") or {}).items()}
    jobs = [(n, j) for n, j in ci.items() if isinstance(j, dict) and "script" in j]
    for stage in stages:
        for name, job in jobs:
            if job.get("stage", "test") != stage:
                continue
            env_vars = dict(global_vars)
            env_vars.update(variables)
            env_vars.update({k: str(v) for k, v in (job.get("variables") or {}).items()})
            rules = job.get("rules")
            if rules is not None and not any(gl_rule(r["if"], env_vars) for r in rules if "if" in r):
                print("job %s: skipped (rules)" % name, flush=True)
                continue
            print("job %s" % name, flush=True)
            work = os.path.join(args.workdir, name)
            shutil.rmtree(work, ignore_errors=True)
            os.makedirs(work)
            # The runner's checkout: the pipeline's commit, full history (GIT_DEPTH 0).
            rc = subprocess.run(["git", "clone", "-q", os.environ["CI_TEST_ORIGIN"], "."], cwd=work).returncode
            rc = rc or subprocess.run(["git", "checkout", "-q", variables["CI_COMMIT_SHA"]], cwd=work).returncode
            if rc:
                return rc
            env = dict(os.environ)
            env.update(env_vars)
            env.update({"GITLAB_CI": "true", "CI": "true"})
            env.update(variables.get("runner_env", {}) if isinstance(variables.get("runner_env"), dict) else {})
            lines = list(ci.get("default", {}).get("before_script", []) or []) + \
                list(job.get("before_script", []) or []) + list(job["script"])
            script = "\n".join(lines)
            rc = run_script(script, {k: str(v) for k, v in env.items()}, work, args.shell, name)
            if rc != 0:
                print("job %s: exit %d" % (name, rc), flush=True)
                return rc
            paths = (job.get("artifacts") or {}).get("paths", [])
            copy_paths(paths, work, os.path.join(args.artefacts, pipeline, name))
    return 0


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["github", "gitlab", "parse"])
    ap.add_argument("recipe")
    ap.add_argument("--context")
    ap.add_argument("--variables")
    ap.add_argument("--workdir")
    ap.add_argument("--artefacts")
    ap.add_argument("--shell", default="", help="a command prefix, e.g. 'tb exec'")
    args = ap.parse_args()
    args.shell = args.shell.split() if args.shell else []
    if args.kind == "parse":   # the recipe as JSON, for tests that look at its structure
        print(json.dumps(load_yaml(open(args.recipe).read()), indent=1))
        return 0
    return run_github(args) if args.kind == "github" else run_gitlab(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except YamlError as e:
        sys.exit("ci_recipe: %s: %s" % (sys.argv[2], e))
