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


def test_cases_and_checks_task_is_valid_and_in_process_is_warned(cli, capsys):
    code, out, err = cli("validate", FIXTURE_TASKS / "casetoy", FIXTURE_TASKS / "toy")
    assert code == 0, out + err
    assert "2 of 2 task(s) valid" in out
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert any("toy/task.yaml" in w and "in-process tests (forgeable)" in w for w in warnings)
    assert not any("casetoy" in w and "forgeable" in w for w in warnings)


def test_visible_checks_that_read_a_hidden_case_are_refused(cli, fixture_tasks):
    visible = fixture_tasks / "casetoy" / "checks" / "test_visible.py"
    visible.write_text(
        visible.read_text()
        + '\n\ndef test_peek(outputs, reference):\n    assert reference["norm"] == 5.0\n'
    )
    code, out, _ = cli("validate", fixture_tasks / "casetoy")
    assert code == 1
    assert "key 'agent'" in out and "hidden case" in out


def test_a_reference_case_that_raises_is_a_validation_error(cli, fixture_tasks):
    cases = fixture_tasks / "casetoy" / "cases" / "cases_toy.py"
    cases.write_text(cases.read_text() + "\n\ndef case_broken():\n    return norm(None)\n")
    code, out, _ = cli("validate", fixture_tasks / "casetoy")
    assert code == 1
    assert "case 'broken' raised TypeError" in out


def test_cases_and_checks_mutants_are_counted(cli, fixture_tasks):
    code, out, err = cli("validate", fixture_tasks / "casetoy", "--mutants", "--workers", "2")
    assert code == 0, out + err
    assert "mutants killed" in err or "mutants killed" in out


def test_mutants_of_unchanged_snippets_are_kept_and_changed_ones_run_again(cli, fixture_tasks):
    """A maintainer who adds a snippet around others reruns only its mutants: tag lines
    change no snippet's key. A changed check (or any code) changes every key."""
    import json

    from rcb_action.tasks import load_task
    from rcb_action.validate._mutants import snippet_keys

    task = fixture_tasks / "casetoy"
    stored = task / "mutants.json"
    before = load_task(task)
    keys = snippet_keys(before)
    marker = {"kind": "marker", "line": 0, "code": "kept"}
    stored.write_text(
        json.dumps(
            {
                "task_sha": "an older version",
                "snippets": {
                    name: {"snippet": name, "total": 1, "killed": 1, "survivors": [marker],
                           "key": key, "kill_rate": 1.0}
                    for name, key in keys.items()
                },
            }
        )
    )  # fmt: skip
    src = task / "src" / "toy.py"
    src.write_text(
        src.read_text()
        .replace(
            '    # <paper2code name="norm">\n',
            '    # <paper2code name="whole norm">\n    # <paper2code name="norm">\n',
        )
        .replace(
            '    # </paper2code name="norm">\n',
            '    # </paper2code name="norm">\n    # </paper2code name="whole norm">\n',
        )
    )
    yaml = task / "task.yaml"
    yaml.write_text(
        yaml.read_text().replace(
            "  slow sum:",
            '  whole norm:\n    checks: ["checks/test_toy.py::test_norm"]\n  slow sum:',
        )
    )
    code, out, err = cli("validate", task, "--mutants", "--workers", "2")
    assert code == 0, out + err
    assert "5 snippet(s) unchanged, kept from mutants.json" in err
    data = json.loads(stored.read_text())
    kept = {name for name, entry in data["snippets"].items() if marker in entry["survivors"]}
    assert kept == set(keys)
    tagged = load_task(task)
    assert data["task_sha"] == tagged.sha
    assert data["snippets"]["whole norm"]["key"] == snippet_keys(tagged)["whole norm"]
    assert data["snippets"]["whole norm"]["total"] > 1  # measured, not the marker's 1

    checks = task / "checks" / "test_toy.py"
    checks.write_text(checks.read_text() + "\n# a comment is a change too\n")
    changed = load_task(task)
    assert all(snippet_keys(changed)[name] != key for name, key in keys.items())


def test_a_check_tuned_to_one_seed_is_a_validation_error(cli, fixture_tasks):
    """Random cases take their seed from RCB_SEED; validate runs the reference under several,
    and a check that holds for seed 0 only fails the task."""
    task = fixture_tasks / "casetoy"
    cases = task / "cases" / "cases_toy.py"
    cases.write_text(
        cases.read_text() + "\n\ndef case_draws():\n"
        "    import os\n"
        "    rng = np.random.default_rng(int(os.environ.get('RCB_SEED', '0')))\n"
        "    return rng.normal(size=400)\n"
    )
    checks = task / "checks" / "test_toy.py"
    honest = checks.read_text() + (
        "\n\ndef test_draws(outputs, reference):\n"
        "    draws = outputs['draws']\n"
        "    assert abs(draws.mean()) < 0.25 and 0.8 < draws.std() < 1.2\n"
        "    np.testing.assert_allclose(draws, reference['draws'])\n"
    )
    checks.write_text(honest)
    yaml = task / "task.yaml"
    yaml.write_text(
        yaml.read_text().replace(
            "checks/test_toy.py::test_norm",
            'checks/test_toy.py::test_norm", "checks/test_toy.py::test_draws',
        )
    )
    code, out, err = cli("validate", task, "--seeds", "5")
    assert code == 0, out + err

    checks.write_text(honest.replace("draws.mean()) < 0.25", "draws.mean() + 0.0366) < 1e-3"))
    code, out, _ = cli("validate", task, "--seeds", "5")
    assert code == 1
    assert "the reference fails its checks with RCB_SEED=1" in out
