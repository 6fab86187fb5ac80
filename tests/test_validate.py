from conftest import FIXTURE_TASKS


def test_fixture_task_is_valid(cli):
    code, out, err = cli("validate", FIXTURE_TASKS / "toy")
    assert code == 0, out + err
    assert "1 of 1 task(s) valid" in out


def test_null_passing_is_a_validation_error(cli, fixture_tasks):
    test_file = fixture_tasks / "toy" / "tests" / "test_toy.py"
    test_file.write_text(
        test_file.read_text().replace("assert norm([3.0, 4.0]) == 5.0", "norm([3.0, 4.0])")
    )
    code, out, _ = cli("validate", fixture_tasks / "toy")
    assert code == 1
    assert (
        "toy.py:22: snippet 'norm': the null body passes its tests, so they do not check it" in out
    )


def test_reference_failing_is_a_validation_error(cli, fixture_tasks):
    test_file = fixture_tasks / "toy" / "tests" / "test_toy.py"
    test_file.write_text(test_file.read_text().replace("== 6.0", "== 7.0"))
    code, out, _ = cli("validate", fixture_tasks / "toy")
    assert code == 1
    assert "snippet 'scale': the reference fails its tests" in out


def test_mutants_are_counted_and_stored(cli, fixture_tasks):
    code, out, err = cli("validate", fixture_tasks / "toy", "--mutants", "--workers", "2")
    assert code == 0, out + err
    assert (fixture_tasks / "toy" / "mutants.json").is_file()
    assert "mutants killed" in out
