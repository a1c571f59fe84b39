"""Kernel source processing for the CPU execution harness.

Works on the *preprocessed* kernel source (``g++ -E`` with the harness shim included, so
macros and included ``.cuh`` files are expanded and every line keeps its original file and
line through the preprocessor's line markers). The shim turns ``__global__``,
``__shared__`` and ``__launch_bounds__`` into markers; this module

* finds the kernels (name, C linkage, namespace, parameter names, launch bounds),
* rewrites ``__shared__`` declarations into per-module storage the runtime can poison:
  ``__shared__ T x[N];`` -> ``static auto& x = ::harness::shared_var<T[N], ID, ALIGN>();``
  and ``extern __shared__ T x[];`` -> ``static T*& x = ::harness::dynamic_shared<T>();``
  (on the same line, so compiler messages keep pointing at the kernel's own lines),
* and writes the entry points Python calls (one per kernel or name expression).
"""
import re
from dataclasses import dataclass, field

GLOBAL = "__harness_global__"
SHARED = "__harness_shared__"
BOUNDS = "__harness_launch_bounds__"

_QUALIFIER_AT_END = re.compile(
    r"(?:\bextern|\bstatic|\bvolatile|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|\balignas\s*\([^()]*\))\s*\Z")
_ALIGN = re.compile(r"__attribute__\s*\(\(\s*(?:__)?aligned(?:__)?\s*\(\s*(\d+)\s*\)\s*\)\)"
                    r"|\balignas\s*\(\s*(\d+)\s*\)")
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|\balignas\s*\([^()]*\)")
_DECLARATOR = re.compile(r"^(?P<type>.*?)(?P<stars>[*&\s]*)\b(?P<name>[A-Za-z_]\w*)\s*"
                         r"(?P<dims>(?:\[[^\]]*\]\s*)*)$", re.S)
_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|extern\s*"C"\s*\{|namespace(?:\s+(\w+))?\s*\{|[{}]|'
                     + GLOBAL)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_KEYWORDS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "unsigned", "signed", "int", "long",
             "short", "char", "float", "double", "bool", "void", "struct", "class", "typename", "auto"}


class SourceError(ValueError):
    """The kernel source uses a construct the harness cannot translate."""


@dataclass
class Kernel:
    name: str                      # as declared (unqualified)
    qualified: str                 # how the generated entry point refers to it
    extern_c: bool
    template: bool
    params: list = field(default_factory=list)   # parameter names (None where unnamed)
    param_types: list = field(default_factory=list)  # declared type text
    max_threads: int = 0           # from __launch_bounds__ (0: none or not a literal)
    file: str = ""
    line: int = 0


def _matching(text, i, open_ch, close_ch):
    """Index just past the bracket that closes the one at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return j + 1
    raise SourceError(f"unbalanced {open_ch!r}")


def split_top_level(text, sep=","):
    """Split on `sep` outside (), [], {} and <> nesting."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


def _location(text, pos):
    """(file, line) of position `pos` in preprocessed text, from the last line marker."""
    start = text.rfind("\n# ", 0, pos)
    while start >= 0:
        m = re.match(r'\n# (\d+) "((?:\\.|[^"\\])*)"', text[start:])
        if m:
            line = int(m.group(1)) + text.count("\n", start + 1, pos) - 1
            return m.group(2), line
        start = text.rfind("\n# ", 0, start)
    return "<source>", text.count("\n", 0, pos) + 1


def _param_name(param):
    param = param.split("=")[0].strip()
    idents = _IDENT.findall(param)
    if len(idents) >= 2 and idents[-1] not in _KEYWORDS and not param.rstrip().endswith(("*", "&", ">")):
        return idents[-1], param[:param.rfind(idents[-1])].strip()
    return None, param


def _literal_int(expr):
    expr = expr.strip()
    m = re.fullmatch(r"\(*\s*(\d+)[uUlL]*\s*\)*", expr)
    return int(m.group(1)) if m else 0


def find_kernels(text):
    """The ``__global__`` functions of preprocessed `text`, in order (declarations deduplicated)."""
    kernels = {}
    stack = []  # one entry per open brace: ("extern_c"|"namespace"|"other", name)
    for m in _TOKENS.finditer(text):
        tok = m.group(0)
        if tok[0] in "\"'":
            continue
        if tok == "}":
            if stack:
                stack.pop()
        elif tok == "{":
            stack.append(("other", None))
        elif tok.startswith("extern"):
            stack.append(("extern_c", None))
        elif tok.startswith("namespace"):
            stack.append(("namespace", m.group(1) or ""))
        else:
            try:
                k = _parse_kernel(text, m.start(), m.end(), stack)
            except SourceError:  # not a declaration we understand: reachable through name_expressions only
                k = None
            if k is not None and k.name not in kernels:
                kernels[k.name] = k
    return list(kernels.values())


def _parse_kernel(text, start, end, stack):
    prefix = text[max(0, start - 400):start]
    cut = max(prefix.rfind(";"), prefix.rfind("}"), prefix.rfind("{"), prefix.rfind("\n#"))
    decl_prefix = prefix[cut + 1:]
    if cut >= 0 and prefix[cut] == "\n":
        decl_prefix = decl_prefix.split("\n", 1)[1] if "\n" in decl_prefix else ""
    extern_c = bool(re.search(r'extern\s*"C"', decl_prefix)) or any(kind == "extern_c" for kind, _ in stack)
    template = bool(re.search(r"\btemplate\s*<", decl_prefix))
    rest = text[end:end + 4000]
    pos = 0
    max_threads = 0
    name = None
    while True:
        m = re.match(r"\s*(?:void\b|static\b|inline\b|__inline__\b)", rest[pos:])
        if m:
            pos += m.end()
            continue
        m = re.match(r"\s*(" + BOUNDS + r"|__attribute__)\s*\(", rest[pos:])
        if m:
            close = _matching(rest, pos + m.end() - 1, "(", ")")
            if m.group(1) == BOUNDS:
                args = split_top_level(rest[pos + m.end():close - 1])
                max_threads = _literal_int(args[0]) if args else 0
            pos = close
            continue
        m = re.match(r"\s*([A-Za-z_]\w*)\s*\(", rest[pos:])
        if not m:
            return None
        name = m.group(1)
        open_at = pos + m.end() - 1
        break
    close = _matching(rest, open_at, "(", ")")
    params, types = [], []
    inner = rest[open_at + 1:close - 1].strip()
    if inner and inner != "void":
        for p in split_top_level(inner):
            n, t = _param_name(p)
            params.append(n)
            types.append(t)
    namespaces = [n for kind, n in stack if kind == "namespace" and n]
    qualified = "::".join(["", *namespaces, name]) if namespaces else name
    file, line = _location(text, start)
    return Kernel(name, qualified, extern_c, template, params, types, max_threads, file, line)


def rewrite(text):
    """Rewrite the markers in preprocessed `text` into plain C++ (see the module docstring)."""
    out = []
    last = 0
    ident = 0
    for m in re.finditer(SHARED + "|" + GLOBAL + "|" + BOUNDS, text):
        if m.start() < last:
            continue
        tok = m.group(0)
        if tok == GLOBAL:
            out.append(text[last:m.start()])
            last = m.end()
            continue
        if tok == BOUNDS:
            paren = text.index("(", m.end())
            close = _matching(text, paren, "(", ")")
            out.append(text[last:m.start()])
            out.append("\n" * text.count("\n", m.start(), close))
            last = close
            continue
        # __shared__: extend backwards over qualifiers, forwards to the semicolon
        begin = m.start()
        while True:
            q = _QUALIFIER_AT_END.search(text, max(last, begin - 300), begin)
            if not q or q.start() < last:
                break
            begin = q.start()
        semi = begin
        depth = 0
        for j in range(m.end(), len(text)):
            c = text[j]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == ";" and depth == 0:
                semi = j
                break
        else:
            raise SourceError("a __shared__ declaration without a terminating ';'")
        decl = text[begin:semi]
        ident += 1
        out.append(text[last:begin])
        out.append(_rewrite_shared(decl, ident, text, begin))
        out.append(";")
        last = semi + 1
    out.append(text[last:])
    return "".join(out)


def _rewrite_shared(decl, ident, text, pos):
    newlines = decl.count("\n")
    flat = " ".join(decl.split())
    align = 16
    for a, b in _ALIGN.findall(flat):
        align = max(align, int(a or b))
    is_extern = bool(re.search(r"\bextern\b", flat))
    flat = _ATTRIBUTE.sub(" ", flat)
    flat = re.sub(r"\b(?:extern|static)\b|" + SHARED, " ", flat)
    flat = " ".join(flat.split())
    declarators = split_top_level(flat)
    first = _DECLARATOR.match(declarators[0].strip())
    if not first:
        file, line = _location(text, pos)
        raise SourceError(f"{file}:{line}: cannot parse the __shared__ declaration {decl.strip()!r}")
    base = first.group("type").strip()
    parts = []
    for k, d in enumerate(declarators):
        m = first if k == 0 else _DECLARATOR.match(d.strip())
        if not m:
            file, line = _location(text, pos)
            raise SourceError(f"{file}:{line}: cannot parse the __shared__ declaration {decl.strip()!r}")
        stars = m.group("stars").replace(" ", "") if k == 0 else (m.group("type") + m.group("stars")).replace(" ", "")
        name, dims = m.group("name"), m.group("dims").replace(" ", "")
        ctype = f"{base}{stars}"
        if is_extern or dims.startswith("[]"):
            parts.append(f"static {ctype}*& {name} = ::harness::dynamic_shared<{ctype}>()")
        else:
            parts.append(f"static auto& {name} = ::harness::shared_var<{ctype}{dims}, {ident * 64 + k}, {align}>()")
    return "; ".join(parts) + "\n" * newlines


def entry_points(kernels):
    """C++ appended to the rewritten source: the entry table Python calls through.

    `kernels` is a list of (expression, Kernel-or-None); the expression names the function
    (``name``, ``ns::name`` or a template instantiation ``name<float, 128>``).
    """
    export = 'extern "C" __attribute__((visibility("default")))'
    lines = ['\n# 1 "<harness entry points>"', "namespace harness_entry {"]
    for i, (expr, _) in enumerate(kernels):
        lines.append(f"static void body_{i}(void** a) {{ ::harness::invoke(&{expr}, a); }}")
    n = len(kernels)
    lines.append("using Body = void (*)(void**);")
    lines.append("static const Body bodies[] = {" + ", ".join(f"body_{i}" for i in range(n)) + ("" if n else "nullptr")
                 + "};")
    lines.append("}  // namespace harness_entry")
    lines.append(f"{export} int harness_kernel_count() {{ return {n}; }}")
    lines.append(f"{export} const char* harness_kernel_signature(int i) {{")
    lines.append("    switch (i) {")
    for i, (expr, _) in enumerate(kernels):
        lines.append(f"        case {i}: return ::harness::signature(&{expr});")
    lines.append("        default: return nullptr;")
    lines.append("    }")
    lines.append("}")
    lines.append(f"{export} int harness_launch_kernel(int i, void** args, const ::harness::LaunchConfig* cfg, "
                 "char* err, unsigned long long errlen) {")
    lines.append(f"    if (i < 0 || i >= {n}) return -1;")
    lines.append("    return ::harness::launch(harness_entry::bodies[i], args, cfg, err, errlen);")
    lines.append("}")
    return "\n".join(lines) + "\n"
