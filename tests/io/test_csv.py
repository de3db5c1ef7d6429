"""CSV files: typed values, the header rule, exact error messages, atomic rewrite, a slice of real data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nablog.io import CsvFile, csvfile, open_source, read_csv
from nablog.lang import DataError

from ..shared_data import DATA
from .helpers import leftovers

TAX = DATA / "tax" / "dirty_50k.csv"


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


# -- values ------------------------------------------------------------------------------------


def test_integers_only_when_they_print_back_the_same(tmp_path):
    path = write(tmp_path / "v.csv", "12,-3,0,00260881,+5,1.0, 7,-0,\n")
    assert CsvFile(path, header=False).read() == {(12, -3, 0, "00260881", "+5", "1.0", " 7", "-0", "")}


def test_quoted_fields_are_strings(tmp_path):
    path = write(tmp_path / "v.csv", '"12",12,"a,b","say ""hi""",""\n')
    assert CsvFile(path, header=False).read() == {("12", 12, "a,b", 'say "hi"', "")}


def test_multiline_fields_and_blank_lines(tmp_path):
    path = write(tmp_path / "v.csv", 'a,"line 1\nline 2"\n\nb,c\n')
    assert CsvFile(path, header=False).read() == {("a", "line 1\nline 2"), ("b", "c")}


def test_round_trip_of_awkward_strings(tmp_path):
    rows = {
        ("with, comma", 'with "quotes"', "with space "),
        ("ünïcødé ✓", "", "00260881"),
        ("12", -12, "-0"),
        ("line\nbreak", "cr\rhere", "tab\there"),
        (" 7", "+5", "1.0"),
    }
    source = open_source(tmp_path / "r.csv")
    source.write({"r": rows})
    assert open_source(tmp_path / "r.csv", header=False).load() == {"r": rows}


def test_single_empty_field_row_is_not_a_blank_line(tmp_path):
    source = open_source(tmp_path / "s.csv")
    source.write({"s": {("",), ("x",)}})
    assert (tmp_path / "s.csv").read_text() == '""\nx\n'
    assert open_source(tmp_path / "s.csv", header=False).load() == {"s": {("",), ("x",)}}


def test_written_rows_are_sorted_ints_first_then_code_points(tmp_path):
    source = open_source(tmp_path / "e.csv")
    source.write({"e": {("b", 1), (10, "z"), ("B", 2), (-1, "a"), ("a", 3)}})
    assert (tmp_path / "e.csv").read_text() == "-1,a\n10,z\nB,2\na,3\nb,1\n"


# -- header ------------------------------------------------------------------------------------


def test_header_detected_from_an_integer_column(tmp_path):
    path = write(tmp_path / "e.csv", "src,dst\n1,2\n2,3\n")
    table = read_csv(path)
    assert table.header == ["src", "dst"] and table.rows == {(1, 2), (2, 3)}


def test_no_header_when_the_first_row_has_an_integer(tmp_path):
    path = write(tmp_path / "e.csv", "1,a\n2,b\n")
    assert read_csv(path).header is None


def test_headered_string_only_file(tmp_path):
    path = write(tmp_path / "country.csv", "code,country\nAL,Albania\nGR,Greece\nFR,France\n")
    table = read_csv(path)
    assert table.header == ["code", "country"]
    assert table.rows == {("AL", "Albania"), ("GR", "Greece"), ("FR", "France")}


def test_header_less_string_only_file(tmp_path):
    path = write(tmp_path / "knows.csv", "alice,bob\nbob,carol\ncarol,dave\ndave,erin\n")
    table = read_csv(path)
    assert table.header is None
    assert ("alice", "bob") in table.rows and len(table.rows) == 4


def test_first_row_value_repeated_below_means_data(tmp_path):
    # Column 0 would vote header by shape (Aa over a), but "Kalahari" repeats: data.
    path = write(tmp_path / "d.csv", "Kalahari,ANG\nKalahari,NAM\nnamib,NAM\n")
    assert read_csv(path).header is None


def test_numeric_like_column_votes_header(tmp_path):
    path = write(tmp_path / "p.csv", "name,phone\nann,744-9007\nbob,517-7658\n")
    assert read_csv(path).header == ["name", "phone"]


def test_header_can_be_forced_both_ways(tmp_path):
    path = write(tmp_path / "lake.csv", "Lake,Island\nArresø,Seeland\nLough Neagh,Ireland\n")
    assert read_csv(path).header is None  # no evidence either way: data
    assert read_csv(path, header=True).rows == {("Arresø", "Seeland"), ("Lough Neagh", "Ireland")}
    numbers = write(tmp_path / "n.csv", "src,dst\n1,2\n")
    assert read_csv(numbers, header=False).rows == {("src", "dst"), (1, 2)}


def test_a_single_row_without_integers_is_data_unless_told(tmp_path):
    path = write(tmp_path / "chair.csv", "infor1,gerhard\n")
    assert read_csv(path).rows == {("infor1", "gerhard")}
    assert read_csv(path, header=True).rows == set()


def test_header_is_kept_on_write(tmp_path):
    path = write(tmp_path / "e.csv", "src,dst\r\n1,2\r\n")
    source = open_source(path)
    assert source.load() == {"e": {(1, 2)}}
    source.write({"e": {(1, 2), (2, "x")}})
    assert path.read_bytes() == b"src,dst\r\n1,2\r\n2,x\r\n"


def test_header_remembered_even_when_the_new_rows_would_not_show_it(tmp_path):
    path = write(tmp_path / "e.csv", "src,dst\n1,2\n")
    source = open_source(path)
    source.load()
    source.write({"e": {("a", "b")}})
    assert path.read_text() == "src,dst\na,b\n"
    assert source.load() == {"e": {("a", "b")}}


def test_new_file_gets_a_header_only_when_asked(tmp_path):
    open_source(tmp_path / "a.csv").write({"a": {(1, 2)}})
    open_source(tmp_path / "b.csv", header=True).write({"b": {(1, 2)}})
    assert (tmp_path / "a.csv").read_text() == "1,2\n"
    assert (tmp_path / "b.csv").read_text() == "c0,c1\n1,2\n"


def test_byte_order_mark_is_skipped_and_kept(tmp_path):
    path = tmp_path / "e.csv"
    path.write_bytes("\ufeffsrc,dst\n1,2\n".encode("utf-8"))
    source = open_source(path)
    assert source.load() == {"e": {(1, 2)}}
    source.write({"e": {(3, 4)}})
    assert path.read_bytes() == "\ufeffsrc,dst\n3,4\n".encode("utf-8")


# -- errors ------------------------------------------------------------------------------------


def test_wrong_row_width_message(tmp_path):
    path = write(tmp_path / "edges.csv", "1,2\n2,3\n3,4,5\n")
    with pytest.raises(DataError) as info:
        open_source(path).load()
    assert str(info.value) == (
        "error: row 3 of edges.csv has 3 fields, expected 2\n"
        f"  --> {path}, row 3\n"
        "   |\n"
        " 3 | 3,4,5\n"
        'hint: every row needs 2 fields, like the first row; quote a field that contains a comma: "a,b"'
    )


def test_wrong_row_width_under_a_header_counts_the_header_line(tmp_path):
    path = write(tmp_path / "edges.csv", "src,dst\n1,2\n\n7\n")
    with pytest.raises(DataError) as info:
        open_source(path, header=True).load()
    assert str(info.value) == (
        "error: row 4 of edges.csv has 1 field, expected 2\n"
        f"  --> {path}, row 4\n"
        "   |\n"
        " 4 | 7\n"
        'hint: every row needs 2 fields, like the header; quote a field that contains a comma: "a,b"'
    )


def test_missing_file_message(tmp_path):
    path = tmp_path / "missing.csv"
    with pytest.raises(DataError) as info:
        open_source(path).load()
    assert str(info.value) == f"error: cannot read {path}: no such file\n  --> {path}\nhint: check the path"


def test_not_utf8_message(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("a,b\nZürich,1\n".encode("latin-1"))
    with pytest.raises(DataError) as info:
        open_source(path).load()
    assert str(info.value) == (
        f"error: cannot read {path}: not UTF-8 text (byte 5, line 2)\n  --> {path}\nhint: save the file as UTF-8"
    )


def test_permission_denied_message(tmp_path, monkeypatch):
    path = write(tmp_path / "secret.csv", "1,2\n")

    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    # Simulated: the tests may run as root, who reads any file.
    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(DataError) as info:
        open_source(path).load()
    assert str(info.value) == (
        f"error: cannot read {path}: permission denied\n  --> {path}\nhint: check the file's permissions"
    )


def test_malformed_quoting_names_the_row(tmp_path):
    path = write(tmp_path / "q.csv", 'a,b\n"c"d,e\n')
    with pytest.raises(DataError) as info:
        open_source(path).load()
    message = str(info.value)
    assert message.startswith("error: malformed CSV in row 2 of q.csv: ")
    assert f"  --> {path}, row 2\n" in message and ' 2 | "c"d,e\n' in message


def test_writing_another_relation_into_a_single_file_is_an_error(tmp_path):
    with pytest.raises(DataError, match="holds relation e only"):
        open_source(tmp_path / "e.csv").write({"f": {(1,)}})


def test_rows_of_the_wrong_width_for_the_header(tmp_path):
    path = write(tmp_path / "e.csv", "src,dst\n1,2\n")
    with pytest.raises(DataError, match="its header has 2 columns"):
        open_source(path).write({"e": {(1, 2, 3)}})
    assert path.read_text() == "src,dst\n1,2\n"


# -- atomicity ---------------------------------------------------------------------------------


def test_failure_while_writing_rows_leaves_the_old_file(tmp_path, monkeypatch):
    path = write(tmp_path / "e.csv", "src,dst\n1,2\n")
    before = path.read_bytes()

    def half_then_fail(f, *args, **kwargs):
        f.write(b"src,dst\n9,9\n")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(csvfile, "write_rows", half_then_fail)
    with pytest.raises(DataError, match="No space left on device"):
        open_source(path).write({"e": {(9, 9), (8, 8)}})
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_failure_of_the_rename_leaves_the_old_file(tmp_path, monkeypatch):
    path = write(tmp_path / "e.csv", "1,2\n")

    def fail(src, dst):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(DataError) as info:
        open_source(path).write({"e": {(3, 4)}})
    assert str(info.value).startswith(f"error: cannot replace {path}: Input/output error")
    assert path.read_text() == "1,2\n"
    assert leftovers(tmp_path) == []


def test_interrupt_while_writing_leaves_the_old_file(tmp_path, monkeypatch):
    path = write(tmp_path / "e.csv", "1,2\n")

    def interrupted(f, *args, **kwargs):
        f.write(b"3,")
        raise KeyboardInterrupt

    monkeypatch.setattr(csvfile, "write_rows", interrupted)
    with pytest.raises(KeyboardInterrupt):
        open_source(path).write({"e": {(3, 4)}})
    assert path.read_text() == "1,2\n"
    assert leftovers(tmp_path) == []


def test_replacing_keeps_the_file_permissions(tmp_path):
    path = write(tmp_path / "e.csv", "1,2\n")
    path.chmod(0o640)
    open_source(path).write({"e": {(3, 4)}})
    assert path.stat().st_mode & 0o777 == 0o640


def test_unchanged_rows_do_not_rewrite(tmp_path):
    path = write(tmp_path / "e.csv", "2,3\n1,2\n")
    open_source(path).write({"e": {(1, 2), (2, 3)}})
    assert path.read_text() == "2,3\n1,2\n"  # same set: the original order stays


# -- real data ---------------------------------------------------------------------------------


@pytest.mark.skipif(not TAX.exists(), reason="shared data not present")
def test_slice_of_the_tax_data(tmp_path):
    path = tmp_path / "tax.csv"
    with TAX.open(encoding="utf-8", newline="") as src, path.open("w", encoding="utf-8", newline="") as dst:
        for _ in range(20):
            dst.write(src.readline())
    source = open_source(path)
    rows = source.load()["tax"]
    assert len(rows) == 19
    assert source.header is True
    by_name = {(r[0], r[1]): r for r in rows}
    pengyuan = by_name[("Pengyuan", "Zendler")]
    # f_name,l_name,gender,area_code,phone,city,state,zip,marital_status,has_child,salary,rate,...
    assert pengyuan == ("Pengyuan", "Zendler", "F", 508, "744-9007", "SWAMPSCOTT", "MA", "01907", "M", "N", 90000, "5.3", 0, 7150, 0)
    assert by_name[("Nik", "Tacic")][7] == 89140
    zips = [r[7] for r in rows]
    assert all(isinstance(z, str) and z.startswith("0") for z in zips if not isinstance(z, int))
    assert any(isinstance(z, str) for z in zips)
    # Writing back keeps the header and the zip codes' leading zeros.
    source.write({"tax": rows - {pengyuan}})
    text = path.read_text(encoding="utf-8")
    assert text.startswith("f_name,l_name,gender,area_code,phone,city,state,zip,")
    assert ",01907," not in text and "Pengyuan" not in text
    assert open_source(path).load() == {"tax": rows - {pengyuan}}


# -- issue 15: headers decided once, write-back that keeps the file -------------------------------


def test_header_decision_survives_a_write_that_changes_the_evidence(tmp_path, capsys):
    """Issue 15, case 2: +person(carol, unknown) then undo never flips the header."""
    from nablog import Database
    from nablog.lang import Delta

    (tmp_path / "rules.lp").write_text("adult(N) :- person(N, A), A >= 18, A < 200.\n")
    data = tmp_path / "data"
    data.mkdir()
    person = write(data / "person.csv", "name,age\nalice,30\nbob,41\n")
    db = Database.from_files(tmp_path / "rules.lp", data=[data])
    note = capsys.readouterr().err
    assert note.count("note:") == 1 and "the first line (name,age) is read as a header" in note
    db.apply(Delta.parse("+person(carol, unknown)."))
    again = Database.from_files(tmp_path / "rules.lp", data=[data])
    assert capsys.readouterr().err == ""  # said once
    assert again.query("adult(X)") == [("alice",), ("bob",)]
    assert ("name", "age") not in again.facts["person"]
    again.undo()
    assert person.read_text() == "name,age\nalice,30\nbob,41\n"
    assert Database.from_files(tmp_path / "rules.lp", data=[data]).query("adult(X)") == [("alice",), ("bob",)]


def test_a_first_row_of_floats_in_scientific_notation_is_data(tmp_path):
    """Issue 15, case 3: e.csv = gene_x,1e-5 / gene_y,0.003 / gene_z,0.5 keeps gene_x."""
    path = write(tmp_path / "e.csv", "gene_x,1e-5\ngene_y,0.003\ngene_z,0.5\n")
    assert CsvFile(path).read() == {("gene_x", "1e-5"), ("gene_y", "0.003"), ("gene_z", "0.5")}


def test_write_back_keeps_header_quoting_order_blank_lines_crlf_and_bom(tmp_path):
    text = '\ufeffName , "Zip"\r\n"bob",00501\r\n\r\nalice,"02134"\r\n"carol, jr",10001\r\n'
    path = write(tmp_path / "p.csv", text)
    source = CsvFile(path, header=True)
    rows = source.read()
    assert rows == {("bob", "00501"), ("alice", "02134"), ("carol, jr", 10001)}
    source.write({"p": (rows - {("alice", "02134")}) | {("dave", "007")}})
    assert path.read_bytes().decode("utf-8") == '\ufeffName , "Zip"\r\n"bob",00501\r\n\r\n"carol, jr",10001\r\ndave,007\r\n'


def test_write_back_to_a_file_without_final_newline(tmp_path):
    path = write(tmp_path / "e.csv", "3,4\n1,2")
    CsvFile(path, header=False).write({"e": {(1, 2), (3, 4), (0, 0)}})
    assert path.read_text() == "3,4\n1,2\n0,0\n"


def test_an_explicit_choice_is_recorded_when_written_and_a_later_guess_does_not_override_it(tmp_path):
    path = write(tmp_path / "l.csv", "Lake,Island\nArresø,Seeland\n")
    assert CsvFile(path, header=True).read() == {("Arresø", "Seeland")}
    assert not (tmp_path / ".nablog").exists()  # a read records nothing (issue 32)
    source = CsvFile(path, header=True)
    source.write({"l": {("Arresø", "Seeland"), ("Neagh", "Ireland")}})
    assert CsvFile(path).read() == {("Arresø", "Seeland"), ("Neagh", "Ireland")}  # the recorded decision, not a new guess
    source = CsvFile(path, header=False)
    source.write({"l": {("Lake", "Island"), ("Neagh", "Ireland")}})
    assert CsvFile(path).read() == {("Lake", "Island"), ("Neagh", "Ireland")}


# -- the bulk reading of plain texts (issue 29) --------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.strategies import examples  # noqa: E402

_PLAIN_FIELDS = st.one_of(
    st.sampled_from(["", "0", "-0", "12", "-3", "007", "+5", "1.0", " 7", "name", "Name", "a b", "x-1", "99999999999999999999", "-9223372036854775808", "é", "\u2028", "\x0b"]),
    st.text(st.characters(blacklist_characters='"\r\n\x00,', blacklist_categories=("Cs",)), max_size=4),
)


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.lists(_PLAIN_FIELDS, min_size=1, max_size=3), max_size=8),
    st.lists(st.integers(0, 8), max_size=3),
    st.sampled_from([None, True, False]),
    st.booleans(),
    st.booleans(),
)
def test_plain_text_is_read_in_bulk_as_the_csv_module_reads_it(tmp_path_factory, records, blanks, header, bom, final_newline):
    # A text without quotes, carriage returns or NUL is read column by column with pyarrow; the
    # oracle is the general reader (the path a rewrite takes, layout=True), record by record.
    lines = [",".join(r) for r in records]
    for at in blanks:
        lines.insert(min(at, len(lines)), "")
    text = ("\ufeff" if bom else "") + "\n".join(lines) + ("\n" if final_newline and lines else "")
    path = tmp_path_factory.mktemp("plain") / "r.csv"
    path.write_text(text, encoding="utf-8", newline="")
    try:
        general = read_csv(path, header, layout=True)
    except DataError as e:
        with pytest.raises(DataError) as bulk:
            read_csv(path, header)
        assert str(bulk.value) == str(e)
        return
    bulk = read_csv(path, header)
    assert (bulk.rows, bulk.header, bulk.width, bulk.newline, bulk.bom) == (general.rows, general.header, general.width, general.newline, general.bom)
