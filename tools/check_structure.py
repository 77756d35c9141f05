#!/usr/bin/env python3
"""Structural checks of src/ that the compiler does not make (docs/development.md, "Layering").

  check_structure.py layering ROOT   the include graph between module folders (src/<m>/ and
                                     include/dpgnn/<m>/) against the table in
                                     docs/development.md: every include allowed, no cycle
  check_structure.py functions ROOT [--max N] [--list M]
                                     no function in src/ longer than N lines (default 150);
                                     --list M prints every function over M lines
  check_structure.py mpi ROOT        no MPI call, and no mpi.h/nccl.h, outside src/dist/

Exit 0 when the check holds, 1 with one line per violation otherwise. Standard library only.
"""
import os
import re
import sys

SOURCE_EXT = (".cpp", ".h", ".cu", ".cuh")


def source_files(root, top):
    for base, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                yield os.path.join(base, f)


def module_of(root, path):
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == "src" and len(rel) > 2:
        return rel[1]
    if rel[:2] == ["include", "dpgnn"] and len(rel) > 3:
        return rel[2]
    return None


# ---------------------------------------------------------------- layering

def read_layering(root):
    """The ```layering block of docs/development.md: `module: modules it may include`."""
    text = open(os.path.join(root, "docs", "development.md"), encoding="utf-8").read()
    m = re.search(r"```layering\n(.*?)```", text, re.S)
    if not m:
        raise SystemExit("docs/development.md has no ```layering block")
    allowed = {}
    for line in m.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, deps = line.partition(":")
        allowed[name.strip()] = set(deps.split())
    return allowed


def find_cycle(graph):
    state = {}
    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path + [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [node])
                if found:
                    return found
        state[node] = 2
        return None
    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found[found.index(found[-1]):]
    return None


def check_layering(root):
    allowed = read_layering(root)
    errors = []
    for name, deps in allowed.items():
        for d in sorted(deps - set(allowed)):
            errors.append(f"docs/development.md: {name} may include '{d}', which is not a listed module")
    cycle = find_cycle(allowed)
    if cycle:
        errors.append("docs/development.md: the layering has a cycle: " + " -> ".join(cycle))
    modules = sorted(d for d in os.listdir(os.path.join(root, "src"))
                     if os.path.isdir(os.path.join(root, "src", d)))
    for m in modules:
        if m not in allowed:
            errors.append(f"src/{m}/ is not in docs/development.md's layering")
    include = re.compile(r'^\s*#\s*include\s+"dpgnn/([A-Za-z0-9_]+)/')
    actual = {}
    for top in ("src", os.path.join("include", "dpgnn")):
        for path in source_files(root, top):
            m = module_of(root, path)
            if m is None:
                continue
            for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                hit = include.match(line)
                if not hit or hit.group(1) == m:
                    continue
                dep = hit.group(1)
                actual.setdefault(m, set()).add(dep)
                if m in allowed and dep not in allowed[m]:
                    errors.append(f"{os.path.relpath(path, root)}:{n}: module {m} includes {dep}, "
                                  f"which docs/development.md's layering does not allow")
    cycle = find_cycle(actual)
    if cycle:
        errors.append("the include graph has a cycle: " + " -> ".join(cycle))
    return errors


# ---------------------------------------------------------------- functions

def strip_code(text):
    """Comments, string and character literals and preprocessor lines blanked out (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n:  # the directive and its continuation lines
                k = text.find("\n", j)
                if k == -1:
                    k = n
                if text[k - 1:k] == "\\":
                    j = k + 1
                    continue
                break
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            k = text.find("\n", i)
            k = n if k == -1 else k
            out.append(" " * (k - i))
            i = k
        elif text.startswith("/*", i):
            k = text.find("*/", i + 2)
            k = n if k == -1 else k + 2
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            d = text[i + 2:text.find("(", i + 2)]
            k = text.find(")" + d + '"', i)
            k = n if k == -1 else k + len(d) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:k]))
            i = k
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


NOT_A_BODY = ("const", "noexcept", "override", "final", "mutable", "try")


def functions_of(path):
    """(name, first line, last line) of every function body at namespace or class scope."""
    code = strip_code(open(path, encoding="utf-8", errors="replace").read())
    found = []
    stack = []          # scope kinds: namespace, class, function, init, other
    pending_start = None
    line = 1
    pending = []
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        in_scope = not stack or stack[-1] in ("namespace", "class")
        if c == "{":
            if not in_scope:
                stack.append("other")
                continue
            head = "".join(pending)
            if re.search(r"\bnamespace\b|\bextern\s*\"\"", head):
                kind = "namespace"
            elif re.search(r"\b(class|struct|union|enum)\b", head) and "(" not in head:
                kind = "class"
            elif "(" in head:
                before = head.rstrip()
                word = re.search(r"([A-Za-z_][A-Za-z0-9_]*|>)$", before)
                tail = before[before.rfind(")") + 1:] if ")" in before else ""
                if word and word.group(1) not in NOT_A_BODY and ":" in tail:
                    kind = "init"   # a member initialiser such as `x_{1}` before the body
                else:
                    kind = "function"
            else:
                kind = "other"
            stack.append((kind, pending_start, head) if kind == "function" else kind)
            if kind != "init":
                pending, pending_start = [], None
            else:
                pending.append("{")
            continue
        if c == "}":
            top = stack.pop() if stack else "other"
            if isinstance(top, tuple):
                _, start, head = top
                name = re.search(r"([~A-Za-z_][A-Za-z0-9_:<>~]*)\s*\(", head)
                found.append((name.group(1) if name else "?", start, line))
            if top == "init":
                pending.append("}")
            continue
        if in_scope:
            if c == ";":
                pending, pending_start = [], None
            else:
                if pending_start is None and not c.isspace():
                    pending_start = line
                pending.append(c)
    return found


def check_functions(root, limit, list_over):
    errors = []
    rows = []
    for path in source_files(root, "src"):
        for name, start, end in functions_of(path):
            length = end - start + 1
            rel = os.path.relpath(path, root)
            if list_over is not None and length > list_over:
                rows.append((length, f"{rel}:{start}: {name} {length} lines"))
            if length > limit:
                errors.append(f"{rel}:{start}: {name} is {length} lines (at most {limit})")
    for _, text in sorted(rows, reverse=True):
        print(text)
    return errors


# ---------------------------------------------------------------- mpi

def check_mpi(root):
    errors = []
    call = re.compile(r"\b(MPI|PMPI|nccl)_?[A-Z][A-Za-z_]*\s*\(|\bnccl[A-Z][A-Za-z]*\s*\(")
    header = re.compile(r'^\s*#\s*include\s*[<"](mpi|nccl)\.h[>"]')
    for top in ("src", os.path.join("include", "dpgnn")):
        for path in source_files(root, top):
            if module_of(root, path) == "dist" and path.startswith(os.path.join(root, "src")):
                continue
            raw = open(path, encoding="utf-8", errors="replace").read()
            code = strip_code(raw)
            for n, (line, raw_line) in enumerate(zip(code.split("\n"), raw.split("\n")), 1):
                rel = os.path.relpath(path, root)
                if header.match(raw_line):
                    errors.append(f"{rel}:{n}: includes {raw_line.strip()} (only src/dist/ may)")
                hit = call.search(line)
                if hit:
                    errors.append(f"{rel}:{n}: calls {hit.group(0).rstrip('( ')} (only src/dist/ talks to MPI or NCCL)")
    return errors


def main(argv):
    if len(argv) < 3 or argv[1] not in ("layering", "functions", "mpi"):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[2]
    if argv[1] == "layering":
        errors = check_layering(root)
    elif argv[1] == "functions":
        limit, list_over = 150, None
        if "--max" in argv:
            limit = int(argv[argv.index("--max") + 1])
        if "--list" in argv:
            list_over = int(argv[argv.index("--list") + 1])
        errors = check_functions(root, limit, list_over)
    else:
        errors = check_mpi(root)
    for e in errors:
        print(e)
    if errors:
        print(f"{argv[1]}: {len(errors)} violation(s)")
        return 1
    print(f"{argv[1]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
