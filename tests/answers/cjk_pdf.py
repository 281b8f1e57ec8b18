"""A PDF written by hand with a Chinese text layer: the Adobe CJK font STSong-Light (no
font file embedded, as PDF readers provide it) in the UniGB-UCS2-H encoding, so every
string is UTF-16 and pypdf extracts it as written (tests/ops/pdfs.py does the same for
Latin text with Helvetica).

A page is a list of lines; a line is a string, or a list of cells laid out at the x
positions of a table's columns — what a typeset table looks like to a text extractor:
the cells of a row on one line, separated by spaces, no rules, no pipes.
"""

TOP, LEFT, LEADING, SIZE = 760, 50, 16, 10


def _hex(text: str) -> str:
    return "<" + text.encode("utf-16-be").hex() + ">"


def _page_stream(lines: list, columns: list[int]) -> bytes:
    ops = ["BT", f"/F1 {SIZE} Tf"]
    y = TOP
    for line in lines:
        cells = line if isinstance(line, list) else [line]
        for x, cell in zip([LEFT, *columns[1:]] if len(cells) > 1 else [LEFT], cells, strict=False):
            ops.append(f"1 0 0 1 {x} {y} Tm {_hex(cell)} Tj")
        y -= LEADING
    ops.append("ET")
    return "\n".join(ops).encode()


def make_cjk_pdf(pages: list[list], *, title: str = "", columns: list[int] | None = None) -> bytes:
    """``columns``: the x positions of a table's columns (the first is the left margin)."""
    columns = columns or [LEFT, 150, 290, 380, 470]
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        (
            "<< /Type /Pages /Kids ["
            + " ".join(f"{5 + 2 * i} 0 R" for i in range(len(pages)))
            + f"] /Count {len(pages)} >>"
        ).encode(),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H "
        b"/DescendantFonts [4 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 4 >> "
        b"/DW 1000 /W [1 95 500] /FontDescriptor << /Type /FontDescriptor "
        b"/FontName /STSong-Light /Flags 6 /FontBBox [-25 -254 1000 880] /ItalicAngle 0 "
        b"/Ascent 880 /Descent -120 /CapHeight 880 /StemV 93 >> >>",
    ]
    for i, lines in enumerate(pages):
        objects.append(
            (
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 3 0 R >> >> /Contents {6 + 2 * i} 0 R >>"
            ).encode()
        )
        stream = _page_stream(lines, columns)
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info = None
    if title:
        objects.append(f"<< /Title {_hex(chr(0xFEFF) + title)} >>".encode())
        info = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n".encode() + b"0000000000 65535 f \n"
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R" + (f" /Info {info} 0 R" if info else "")
    out += f"trailer\n{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def wrap(text: str, width: int = 46) -> list[str]:
    """A paragraph set in lines of at most ``width`` characters, broken after a comma or
    semicolon where one is near the end of the line (never inside a figure and its unit)."""
    lines = []
    while len(text) > width:
        cut = max(text.rfind(p, 0, width) for p in "，；、。")
        cut = cut + 1 if cut > width // 2 else width
        lines.append(text[:cut])
        text = text[cut:]
    return [*lines, text] if text else lines
