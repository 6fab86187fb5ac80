"""The fake GitHub API answers PyGithub the way the real one does for the calls rcb makes."""

import json

import requests
from fake_github import FakeGitHub
from github import Auth, Github
from test_names import record

from rcb_action.github import GitHubContext, fetch_artifact_report
from rcb_action.models import load_registry
from rcb_action.report import build_report


def test_pygithub_against_the_fake():
    with FakeGitHub() as gh:
        gh.add_repo("octo/rcb")
        gh.add_pull("octo/rcb", 7)
        client = Github(base_url=gh.url, auth=Auth.Token("test-token"))
        repo = client.get_repo("octo/rcb")
        pull = repo.get_pull(7)
        comment = pull.as_issue().create_comment("first")
        comment.edit("second")
        assert [c.body for c in pull.as_issue().get_comments()] == ["second"]
        issue = repo.create_issue(title="Candidate: 2411.02853", body="b", labels=["candidate"])
        assert issue.number == 8
        titles = [i.title for i in repo.get_issues(state="all", labels=["candidate"])]
        assert titles == ["Candidate: 2411.02853"]
        assert [c.method for c in gh.calls if "comments" in c.path] == ["POST", "PATCH", "GET"]


def test_lists_are_paged_with_link_headers():
    with FakeGitHub() as gh:
        gh.add_repo("octo/rcb")
        gh.add_pull("octo/rcb", 7)
        for i in range(5):
            gh.add_comment("octo/rcb", 7, f"c{i}", login="someone")
        client = Github(base_url=gh.url, auth=Auth.Token("t"), per_page=2)
        comments = client.get_repo("octo/rcb").get_issue(7).get_comments()
        assert [c.body for c in comments] == [f"c{i}" for i in range(5)]
        pages = [c.query.get("page", ["1"])[0] for c in gh.calls if c.path.endswith("/comments")]
        assert pages == ["1", "2", "3"]
        response = requests.get(
            f"{gh.url}/repos/octo/rcb/issues/7/comments", params={"per_page": 2, "page": 2}
        )
        assert [c["body"] for c in response.json()] == ["c2", "c3"]
        links = response.headers["Link"]
        assert 'page=3>; rel="next"' in links and 'page=3>; rel="last"' in links
        assert 'page=1>; rel="first"' in links and 'page=1>; rel="prev"' in links


def test_the_base_report_is_found_past_page_one_and_read_behind_a_redirect():
    built = build_report([record("reference")], load_registry())
    report = built.model_dump(mode="json") if hasattr(built, "model_dump") else built
    with FakeGitHub() as gh:
        gh.add_repo("octo/rcb")
        gh.add_artifact("octo/rcb", "rcb-report", {"report.json": json.dumps(report)})
        for _ in range(35):  # newer artifacts of other branches push it to page 2
            gh.add_artifact("octo/rcb", "rcb-report", {"x": "y"}, head_branch="feature")
        context = GitHubContext(
            api_url=gh.url, token="t", repository="octo/rcb", event_name="pull_request"
        )
        found = fetch_artifact_report(context, "main")
        assert found is not None
        models = found.report["models"] if isinstance(found.report, dict) else found.report.models
        assert list(models) == ["reference"]
        # The zip came from the other host, and the API token did not go with it.
        assert gh.blob_calls and all(not authorized for _, authorized in gh.blob_calls)
        assert any(c.query.get("page") == ["2"] for c in gh.calls if "artifacts" in c.path)


def test_the_blob_host_refuses_the_api_token():
    with FakeGitHub() as gh:
        gh.add_repo("octo/rcb")
        artifact = gh.add_artifact("octo/rcb", "rcb-report", {"report.json": "{}"})
        url = f"{gh.url}/repos/octo/rcb/actions/artifacts/{artifact}/zip"
        first = requests.get(url, allow_redirects=False, timeout=10)
        assert first.status_code == 302
        location = first.headers["Location"]
        assert location.startswith(gh.blob_url) and gh.blob_url != gh.url
        assert requests.get(location, timeout=10).status_code == 200
        refused = requests.get(location, headers={"Authorization": "token t"}, timeout=10)
        assert refused.status_code == 400
