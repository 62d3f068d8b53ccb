#!/usr/bin/env python3
"""List every name a library header declares that does not carry the header's module word.

The rule (DESIGN.md, "public names dp_<module>_<verb>"): a function, type, struct/enum tag,
enumerator, macro or global variable declared at the top level of a library header dp_WORD.h
is named dp_WORD or dp_WORD_... (DP_WORD / DP_WORD_... in capitals). A header dp_WORD_PART.h that
extends the module of dp_WORD.h (dp_graph_formats.h, dp_exec_backend.h, dp_gen_einsum.h) may
also use WORD. Include guards and the names in EXCEPTIONS below (each with its reason) are
not checked. Struct members and function parameters are not names of the library.

Usage: check-names.py [--srcdir DIR] [--list]
  Scans DIR/{models,machine,sim,exec,nn,policy}/dp_*.h (every library header, installed or not).
  Prints one line per name without its module word (HEADER:LINE: NAME ...) and a summary line;
  exit status 1 when there is one, 0 otherwise. --list prints every name found, with its word.
"""
import os
import re
import sys

FOLDERS = ("models", "machine", "sim", "exec", "nn", "policy")

# Documented exceptions: (header, a regular expression matching the whole name) -> reason.
EXCEPTIONS = {
    ("models/dp_error.h", r"DP_OK|DP_E[A-Z]+"):
        "the library's status codes, returned by every module (as GSL_SUCCESS and GSL_EINVAL are GSL's)",
}

IDENT = re.compile(r"[A-Za-z_]\w*")


def strip_comments_and_strings(text):
    """Comments become spaces (newlines kept, so line numbers stay right); strings become ""."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n\x01]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_attributes(s):
    """Remove __attribute__((...)) with balanced parentheses."""
    while True:
        m = re.search(r"__attribute__\s*\(", s)
        if not m:
            return s
        depth, j = 0, m.end() - 1
        while j < len(s):
            if s[j] == "(":
                depth += 1
            elif s[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        s = s[:m.start()] + " " + s[j + 1:]


def declared_names(path):
    """(name, kind, line) for every top-level name the header declares."""
    # Continued lines are one line (before comments, as for the compiler): \x01 marks the joins.
    text = open(path, encoding="utf-8").read().replace("\\\n", "\x01")
    lines = strip_comments_and_strings(text).split("\n")
    names = []
    guard = "DP_" + os.path.basename(path)[3:-2].upper() + "_H"
    code = []            # the header with preprocessor lines and C++ wrappers blanked
    skip_cplusplus = 0
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.lstrip().startswith("#"):
            joins = line.count("\x01")
            d = line.replace("\x01", " ").strip()[1:].strip()
            if re.match(r"if(def)?\s+__cplusplus|if\s+defined\s*\(?\s*__cplusplus", d):
                skip_cplusplus += 1
            elif skip_cplusplus and d.startswith("endif"):
                skip_cplusplus -= 1
            m = re.match(r"define\s+([A-Za-z_]\w*)", d)
            if m and m.group(1) != guard and not skip_cplusplus:
                names.append((m.group(1), "macro", len(code) + 1))
            code.extend([""] * (joins + 1))
        else:
            line = line.replace("\x01", "\n")
            code.append("" if skip_cplusplus else line)
        k += 1
    code = "\n".join(code)

    # Split the top level into statements (up to ';' at depth 0, or a function body's '}').
    depth, stmt_start, i = 0, 0, 0
    while i < len(code):
        c = code[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                head = code[stmt_start:i + 1]
                before = head[:head.find("{")]
                if before.rstrip().endswith(")"):           # an inline function's body
                    handle(before, code.count("\n", 0, stmt_start) + 1, names, path)
                    stmt_start = i + 1
        elif c == ";" and depth == 0:
            handle(code[stmt_start:i], code.count("\n", 0, stmt_start) + 1, names, path)
            stmt_start = i + 1
        i += 1
    return names


def handle(stmt, line0, names, path):
    lead = len(stmt) - len(stmt.lstrip())
    line = line0 + stmt[:lead].count("\n")
    s = strip_attributes(stmt.strip())
    if not s:
        return
    while True:                                   # a macro invocation without ';' (DP_HEAP_DEFINE)
        m = re.match(r"[A-Z_][A-Z0-9_]*\s*\(", s)
        if not m:
            break
        depth, j = 0, m.end() - 1
        while j < len(s):
            depth += {"(": 1, ")": -1}.get(s[j], 0)
            if depth == 0:
                break
            j += 1
        s = s[j + 1:].strip()
    if not s:
        return
    s_flat = " ".join(s.split())
    is_typedef = s_flat.startswith("typedef ")
    body = None
    if "{" in s:
        open_i, close_i = s.find("{"), s.rfind("}")
        head, body, tail = s[:open_i], s[open_i + 1:close_i], s[close_i + 1:]
        m = re.search(r"\b(struct|union|enum)\s+([A-Za-z_]\w*)\s*$", head)
        if m:
            names.append((m.group(2), "tag", line))
        if re.search(r"\benum\b", head):
            for item in body.split(","):
                m = IDENT.search(item)
                if m:
                    names.append((m.group(0), "enumerator", line))
        if is_typedef:
            for decl in tail.split(","):
                m = IDENT.search(decl)
                if m:
                    names.append((m.group(0), "type", line))
        return
    if is_typedef:
        m = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(", s)          # function pointer
        if not m:
            m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*$", s)
        if m:
            names.append((m.group(1), "type", line))
        return
    m = re.match(r"(struct|union|enum)\s+([A-Za-z_]\w*)\s*$", s_flat)   # forward declaration
    if m:
        names.append((m.group(2), "forward tag", line))
        return
    if "(" in s:
        m = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(", s)
        if m and s.find("(") == m.start():
            names.append((m.group(1), "variable", line))
            return
        m = re.search(r"([A-Za-z_]\w*)\s*\(", s)
        if m:
            names.append((m.group(1), "function", line))
        return
    m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*(=.*)?$", s, re.S)
    if m:
        names.append((m.group(1), "variable", line))


def module_words(path, headers):
    base = os.path.basename(path)[3:-2]          # dp_graph_formats.h -> graph_formats
    words = [base]
    parts = base.split("_")
    for k in range(len(parts) - 1, 0, -1):
        parent = "_".join(parts[:k])
        if parent in headers:
            words.append(parent)
    return words


def main(argv):
    srcdir, listing = ".", False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--srcdir" and args:
            srcdir = args.pop(0)
        elif a == "--list":
            listing = True
        else:
            sys.stderr.write(__doc__)
            return 2
    paths = []
    for folder in FOLDERS:
        d = os.path.join(srcdir, folder)
        if not os.path.isdir(d):
            sys.stderr.write("check-names.py: %s: no such folder (--srcdir)\n" % d)
            return 2
        paths += sorted(os.path.join(d, f) for f in os.listdir(d)
                        if f.startswith("dp_") and f.endswith(".h"))
    headers = {os.path.basename(p)[3:-2] for p in paths}
    exceptions = [(h, re.compile(pat + r"\Z")) for (h, pat) in EXCEPTIONS]
    total = bad = excepted = 0
    for path in paths:
        words = module_words(path, headers)
        seen = set()
        for name, kind, line in declared_names(path):
            if (name, kind) in seen:
                continue
            seen.add((name, kind))
            total += 1
            low = name.lower()
            ok = any(low == "dp_" + w or low.startswith("dp_" + w + "_") for w in words)
            if kind == "forward tag" and not ok:
                # a forward declaration names another header's type (to break an include cycle):
                # right when that header's module word starts the name
                ok = any(low == "dp_" + h or low.startswith("dp_" + h + "_") for h in headers)
            rel = os.path.relpath(path, srcdir)
            if listing:
                print("%s:%d: %s %s [%s]%s" % (rel, line, kind, name, "|".join(words),
                                               "" if ok else " NO"))
            if ok:
                continue
            if any(rel == h and rx.match(name) for h, rx in exceptions):
                excepted += 1
                continue
            bad += 1
            if not listing:
                print("%s:%d: %s %s does not start with dp_%s_ (or DP_%s_)"
                      % (rel, line, kind, name, words[0], words[0].upper()))
    print("check-names: %d of %d names in %d library headers lack their header's module word"
          " (%d documented exceptions)" % (bad, total, len(paths), excepted))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
