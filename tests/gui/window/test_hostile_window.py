"""Hostile files in the real window: each opens, or is refused in one dialog, and the
window goes on with what it showed (issue 17)."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.conftest import EXAMPLES, WAIT_MS
from tests.mutate import mutated_files


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(text=mutated_files())
def test_a_mutated_file_opens_or_is_one_dialog(make_window, qtbot, dialogs, tmp_path,
                                               text) -> None:
    window = getattr(test_a_mutated_file_opens_or_is_one_dialog, "window", None)
    if window is None or not window.isVisible():
        window = make_window(EXAMPLES / "mlp-symbol.json")
        test_a_mutated_file_opens_or_is_one_dialog.window = window
    before = window.document
    path = tmp_path / "m-symbol.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    opened = window.files.open_path(str(path))
    qtbot.wait(60)                                     # the dialog watch answers
    refused = dialogs.take_closed()
    if opened:
        assert window.document is not before and not refused
        pane = window.graph_pane
        qtbot.waitUntil(lambda: not pane.busy_now, timeout=WAIT_MS)
    else:
        assert window.document is before
        assert len(refused) == 1 and refused[0][0] == "Cannot open the file", refused
        assert "\n" not in refused[0][1] and "Traceback" not in refused[0][1]
    assert window.isVisible()
