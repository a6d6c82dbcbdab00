"""The wide tables at a phone's width (issue 59): at 390 px, tag coverage, Disputes, Releases,
a release's page, the runs, the audit log and Studies scrolled inside their cards with header
cells cut ("Majo…") and the audit log's Details squeezed; so did a run's per-label scores and
failed sets, the Dashboard's agreement per split, and Settings' tags (names cut in their boxes)
and settings (help squeezed to a word a line). Below 600 px each row is a block whose cells name
their column, so that nothing is cut and nothing scrolls sideways."""

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotation.crowd.services.studies import study_create
from annotation.demo import DEMO_PASSWORD, DEMO_SLUG
from annotation.models import Project, Webhook
from annotation.webhooks.services import deliveries_make
from evaluation.models import EvaluationRun
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser

# Each table as its card shows it: the card's inner right edge, the table's width, every header
# cell on the screen (not one stepped aside) whose text runs past its box or past the card, and
# every cell whose column name (data-label) is not its column's header.
MEASURE = """(table) => {
  const card = table.closest("section");
  const pad = parseFloat(getComputedStyle(card).paddingRight);
  const inner = card.getBoundingClientRect().right - pad;
  const heads = Array.from(table.querySelectorAll("thead th")).map(th => th.textContent.trim());
  const onScreen = (element) => {  // a header stepped aside is a 1-px box
    const box = element.getBoundingClientRect();
    return box.width > 1 && box.height > 1;
  };
  const shown = Array.from(table.querySelectorAll("th"))
    .filter(th => onScreen(th) && (!th.closest("thead") || onScreen(th.closest("thead"))));
  const cut = shown.filter(th => th.scrollWidth > th.clientWidth
    || th.getBoundingClientRect().right > inner + 1).map(th => th.textContent.trim());
  const unnamed = [];
  for (const row of table.querySelectorAll("tbody tr")) {
    Array.from(row.children).forEach((cell, i) => {
      if (cell.colSpan > 1 || !heads[i]) return;
      if (cell.dataset.label !== heads[i]) unnamed.push([heads[i], cell.dataset.label || null]);
    });
  }
  return {
    cut, unnamed, rows: table.querySelectorAll("tbody tr").length,
    overflow: table.getBoundingClientRect().right - inner,
    scrolls: card.scrollWidth > card.clientWidth,
  };
}"""


def test_wide_tables_read_whole_at_a_phones_width(page, login, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("load_demo", stdout=StringIO())
    project = Project.objects.get(slug=DEMO_SLUG)
    admin = User.objects.get(username="admin")
    study_create(project=project, actor=admin, name="Pilot on Prolific, 40 people",
                 platform="prolific", max_participants=40)  # fmt: skip
    hook = Webhook.objects.create(
        project=project, url="https://ci.example.org/hook", events=["release.published"]
    )
    deliveries_make([hook], "release.published", {"project": DEMO_SLUG, "test": True})
    release = project.releases.latest("pk")
    run = EvaluationRun.objects.filter(model__project=project).latest("pk")  # 3 failed sets
    base = f"/p/{DEMO_SLUG}"
    tables = {
        "dashboard": (f"{base}/", ["#tag-coverage", "#agreement-per-split"]),
        "disputes": (f"{base}/disputes/", ["#disputes", "#no-majority"]),
        "releases": (f"{base}/releases/", ["#releases"]),
        "runs": (f"{base}/evaluations/", ["#runs"]),
        "audit": (f"{base}/audit/", ["#audit"]),
        "studies": (f"{base}/studies/", ["#studies"]),
        "release": (f"{base}/releases/{release.pk}/", ["#release-counts", "#power-table"]),
        "webhooks": (f"{base}/settings/webhooks/", [f"#webhook-{hook.pk} table"]),
        "run": (f"{base}/evaluations/{run.pk}/", ["#per-label", "#failed-sets table"]),
        "settings": (f"{base}/settings/", ["#tags", "#settings"]),
        "prompt": (f"{base}/models/prompt/", []),  # no table: the page alone keeps the width
    }
    page.set_viewport_size({"width": 390, "height": 800})
    login("admin", DEMO_PASSWORD)
    for name, (path, selectors) in tables.items():
        page.goto(path)
        for selector in selectors:
            found = page.locator(selector).all()  # a run's failed sets: a table each
            assert found, (name, selector)
            for table in found:
                seen = table.evaluate(MEASURE)
                assert seen["rows"] and not seen["cut"], (name, selector, seen)
                assert seen["overflow"] <= 1 and not seen["scrolls"], (name, selector, seen)
                assert not seen["unnamed"], (name, selector, seen["unnamed"][:3])
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, name
        screenshot(page, f"phone-table-{name}")
        if name in ("release", "webhooks"):  # the SHA-256, the card's YAML, the address box
            for card in page.locator("section.card").all():
                assert card.evaluate("c => c.scrollWidth <= c.clientWidth"), card.inner_text()[:80]
        if name == "audit":  # Details: a line as wide as the table, not a squeezed column
            details = page.locator("#audit td.audit-details").first.bounding_box()
            table = page.locator("#audit").bounding_box()
            assert details and table and details["width"] >= table["width"] - 2, (details, table)


def test_the_tables_keep_their_columns_at_a_desktops_width(page, login, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("load_demo", stdout=StringIO())
    run = EvaluationRun.objects.filter(model__project__slug=DEMO_SLUG).latest("pk")
    base = f"/p/{DEMO_SLUG}"
    tables = [  # page, table, a header that shows (None: the rows name themselves)
        (f"{base}/disputes/", "#disputes", "Majority"),
        (f"{base}/", "#agreement-per-split", "Human macro F1"),
        (f"{base}/evaluations/{run.pk}/", "#per-label", "Precision"),
        (f"{base}/evaluations/{run.pk}/", "#failed-sets table >> nth=0", "Predicted"),
        (f"{base}/settings/", "#tags", "Description"),
        (f"{base}/settings/", "#settings", None),
    ]
    login("admin", DEMO_PASSWORD)
    for path, selector, heading in tables:
        page.goto(path)
        table = page.locator(selector)
        if heading:
            header = table.locator("thead th", has_text=heading)
            assert header.is_visible() and header.bounding_box()["height"] > 1  # type: ignore[index]
        cells = table.locator("tbody tr").first.locator(":scope > *")
        tops = [cells.nth(n).bounding_box()["y"] for n in range(cells.count())]  # type: ignore[index]
        assert len(tops) > 1 and max(tops) - min(tops) < 3, (selector, tops)  # side by side
