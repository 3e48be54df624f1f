"""The trace links of `report --by agent` and the HTML page (reports/agents.py `trace_links`): whatever a
trace or observation id holds, the link names a trace page under the project's traces, nothing else."""

from __future__ import annotations

from evaluator.reports import trace_links

PAGE = "https://cloud.langfuse.com/project/p1/traces/"


def test_an_id_is_the_trace_page_and_its_observation() -> None:
    link = trace_links(PAGE)

    assert link("3f2a9c", "7b1e") == PAGE + "3f2a9c?observation=7b1e"
    assert link("3f2a9c", None) == PAGE + "3f2a9c"
    assert link("", "7b1e") is None


def test_ids_from_the_runs_cannot_lead_elsewhere() -> None:
    link = trace_links(PAGE)

    url = link("../../../settings/api-keys?x=1#top", "o&next=javascript:alert(1)")

    assert url == (
        PAGE
        + "..%2F..%2F..%2Fsettings%2Fapi-keys%3Fx%3D1%23top?observation=o%26next%3Djavascript%3Aalert%281%29"
    )
    assert link("javascript:alert(1)", None) == PAGE + "javascript%3Aalert%281%29"
