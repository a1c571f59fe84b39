"""Formatting helpers for the printed report and messages."""

__all__ = ["format_bytes", "table", "communication_rows"]


def format_bytes(n):
    """``1536`` -> ``"1.50 KiB"``; exact bytes below 1 KiB; ``None`` -> ``"n/a"``."""
    if n is None:
        return "n/a"
    sign = "-" if n < 0 else ""
    n = abs(n)
    if n < 1024:
        return f"{sign}{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024.0
        if n < 1024 or unit == "TiB":
            return f"{sign}{n:.2f} {unit}"


def table(header, rows, align=None):
    """A plain-text table; ``align`` is a string of "<" / ">" per column (default: first left)."""
    rows = [[str(c) for c in r] for r in rows]
    header = [str(h) for h in header]
    widths = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(len(header))]
    align = align or "<" + ">" * (len(header) - 1)
    def line(cells):
        return "  ".join(f"{c:{a}{w}}" for c, a, w in zip(cells, align, widths)).rstrip()
    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def communication_rows(marks):
    """One row per operation name: count, bytes delivered, seconds between posting and completion."""
    rows = {}
    for m in marks:
        name = m["name"]
        count, nbytes, seconds = rows.get(name, (0, 0, 0.0))
        span = (m["end"] - m["start"]) if m["end"] is not None else 0.0
        rows[name] = (count + 1, nbytes + m["bytes"], seconds + span)
    return [(name, str(c), format_bytes(b), f"{s:.4f}") for name, (c, b, s) in sorted(rows.items())]
