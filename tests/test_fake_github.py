"""The fake GitHub API answers PyGithub the way the real one does for the calls rcb makes."""

from fake_github import FakeGitHub
from github import Auth, Github


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
