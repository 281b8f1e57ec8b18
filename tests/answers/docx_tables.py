"""Tables in the evaluation fixtures' DOCX files: rows of cell texts, written as one Word table."""


def docx_table(document, rows: list[list[str]]) -> None:
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.rows[r].cells[c].text = text
