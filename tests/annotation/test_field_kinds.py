"""How a field's kind shows its value on the pages (docs/task-types.md): text escaped, HTML
sanitised with its marks kept, an image address as the image (https only); answers of several
spans shown as one answer."""

from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.templatetags.contrastlab import answers_shown
from annotation.text.fields import field_html

MARKED = "<p>He <span style='color:red;'><strong>said </strong></span>so.</p>"


def test_html_keeps_its_marks_and_loses_its_scripts():
    shown = field_html(MARKED + "<script>alert(1)</script><img src=x onerror=alert(1)>", "html")
    assert '<span style="color:red"><strong>said </strong></span>' in shown
    assert "<script" not in shown and "alert" not in shown and "<img" not in shown
    assert field_html('<span style="position:fixed;color:blue">x</span>', "html") == (
        '<span style="color:blue">x</span>'
    )  # only colours and emphasis
    assert field_html('<a href="javascript:alert(1)">x</a>', "html") == "x"


def test_text_is_escaped_and_image_addresses_are_images_over_https_only():
    assert (
        field_html(MARKED, "text")
        == field_html(MARKED)
        == (
            "&lt;p&gt;He &lt;span style=&#x27;color:red;&#x27;&gt;&lt;strong&gt;said "
            "&lt;/strong&gt;&lt;/span&gt;so.&lt;/p&gt;"
        )
    )
    shown = field_html("https://img.example/a.jpg?x=1&y=2", "image_url")
    assert '<img src="https://img.example/a.jpg?x=1&amp;y=2"' in shown
    assert "<figcaption>" in shown
    for address in ("http://img.example/a.jpg", "javascript:alert(1)", '"><script>x</script>'):
        shown = field_html(address, "image_url")
        assert "<img" not in shown and "<script" not in shown


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>\"'=/ ascriptonerrorimg&;:")), max_size=60))
def test_no_value_of_any_kind_gets_a_script_or_a_handler_through(value):
    for kind in ("text", "html", "image_url"):
        shown = field_html(value, kind).lower()
        assert "<script" not in shown and "onerror=" not in shown.replace("&quot;", "")


def test_a_multi_span_answer_is_shown_as_one_answer():
    assert answers_shown(["Paris", ["Traci", "Gibson"]]) == "Paris · Traci | Gibson"
