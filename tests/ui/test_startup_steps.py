"""The lab's start: every background step it shows in the status box finishes without error."""

from __future__ import annotations

from concurrent.futures import wait

from ui import resources


def test_every_start_step_succeeds_on_the_embedded_defaults() -> None:
    boot = resources.Startup()
    wait([step.future for step in boot.steps.values()], timeout=300)
    assert boot.ready()
    assert "offline" in boot.steps, "with no key the offline model is one of the steps"
    failures = {name: repr(boot.failed(name)) for name in boot.steps if boot.failed(name) is not None}
    assert failures == {}
    resources.stop_scheduler()
