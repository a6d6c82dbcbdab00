"""The layout promises of README's architecture section, checked on the source itself."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("annotation", "evaluation", "config")
HEAVY = ("torch", "transformers", "tokenizers", "sklearn")


def product_modules() -> dict[str, Path]:
    modules = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def module_level_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Product modules that `name` imports when it is imported (not inside functions)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {m for m in found if m in known and m != name}


def test_no_import_cycles_between_product_modules():
    modules = product_modules()
    graph = {name: module_level_imports(name, path, set(modules)) for name, path in modules.items()}
    state: dict[str, str] = {}
    cycles = []

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                cycles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_annotation_never_imports_evaluation():
    modules = product_modules()
    offenders = {
        name
        for name, path in modules.items()
        if name.startswith("annotation")
        and any(m.startswith("evaluation") for m in module_level_imports(name, path, set(modules)))
    }
    assert offenders == set()


def test_only_heavy_libraries_are_imported_inside_functions():
    """Function-local imports are only for keeping torch, transformers (and its tokenizers) and
    scikit-learn out of the web process, in the worker-side runners and analyses."""
    local = []
    for name, path in product_modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                local += [
                    (name, ast.unparse(sub))
                    for sub in ast.walk(node)
                    if isinstance(sub, ast.Import | ast.ImportFrom)
                ]
    assert local, "the runners import torch lazily"
    assert all(
        name.startswith(("evaluation.runners.", "evaluation.analyses.")) for name, _ in local
    )
    assert all(any(lib in code for lib in HEAVY) for _, code in local), local


# Each app in three layers (README, "Layout"): what its workflows share, the workflows (a
# folder each, any other folder), and the entry points that wire them to URLs, the worker, the
# admin, commands and templates. An import goes down or sideways, never back up: a helper that
# two workflows use lives in a shared room, and a workflow's task lives in its folder.
SHARED = {
    "annotation": {"models", "text", "errors", "jobs", "downloads", "sql", "bulk", "prompting",
                   "pagination", "permissions", "formfields", "uploads", "outbound"},
    "evaluation": {"models", "access", "metrics", "runners"},
}  # fmt: skip
ENTRY = {
    "annotation": {"urls", "tasks", "admin", "apps", "demo", "management", "templatetags"},
    "evaluation": {"urls", "tasks", "admin", "apps", "management"},
}


def layer(module: str) -> tuple[str, int]:
    """A module's app, and its layer there: 0 shared, 1 a workflow, 2 an entry point."""
    app, room = [*module.split("."), ""][:2]
    if not room or room in SHARED[app]:  # the app's package itself holds nothing
        return app, 0
    if room in ENTRY[app]:
        return app, 2
    assert (ROOT / app / room).is_dir(), f"{app}/{room}.py is in no layer of tests/test_layout.py"
    return app, 1


def test_no_import_goes_back_up_a_layer():
    """downloads.py read releases/files.py's cells, and imports/, runs/ and analyses/ queued
    their tasks from the top-level tasks.py, which imported them back (issue 51). Across apps
    the layers hold too: evaluation's shared layer (models, metrics) read the answer rules from
    annotation's validation workflow until they moved to annotation/text/; it may import
    annotation's shared layer alone, and evaluation's workflows no entry point of annotation."""
    modules = product_modules()
    upward = sorted(
        f"{name} -> {target}"
        for name, path in modules.items()
        if name.startswith(tuple(SHARED))
        for target in module_level_imports(name, path, set(modules))
        if target.startswith(tuple(SHARED)) and layer(target)[1] > layer(name)[1]
    )
    assert upward == []


# A workflow folder's writes are its services (README, "Layout"): a module, or a services/
# package of modules named for what they do. Opening a transaction or locking rows is what a
# write does, so only services do it in a workflow folder (the shared layer's helpers, such as
# jobs and bulk.atomic_or_conflict, do it for them); views, selectors and the worker's job
# bodies call them. Issue 51 found the writes named drafts, claims, dispatch, removal, actions.
OPENS_TRANSACTIONS = {"atomic", "atomic_or_conflict", "select_for_update"}


def opens_transactions(path: Path) -> bool:
    return any(
        (isinstance(node, ast.Attribute) and node.attr in OPENS_TRANSACTIONS)
        or (isinstance(node, ast.Name) and node.id in OPENS_TRANSACTIONS)
        for node in ast.walk(ast.parse(path.read_text()))
    )


def test_only_services_open_transactions_in_a_workflow_folder():
    writers = {
        name
        for name, path in product_modules().items()
        if name.startswith(tuple(SHARED))
        and layer(name)[1] == 1
        and "services" not in name.split(".")
        and opens_transactions(path)
    }
    assert writers == set()


def test_modules_stay_small_and_apps_stay_shallow():
    long = {
        name: n
        for name, path in product_modules().items()
        if (n := len(path.read_text().splitlines())) > 400
    }
    assert long == {}
    for app, cap in (("annotation", 15), ("evaluation", 8)):
        flat = sorted(p.name for p in (ROOT / app).glob("*.py"))
        assert len(flat) <= cap, flat


SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT INTO|UPDATE\s+\S+\s+SET|DELETE FROM|FROM STDIN)\b", re.S
)
TABLE = re.compile(r"\b(annotation|evaluation|auth|authtoken)_[a-z_]+\b")


def test_hand_written_sql_lives_in_few_modules_and_names_no_table():
    """Services call named statements (README, "Layout"); tables are named by the models."""
    holders = set()
    for name, path in product_modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.JoinedStr):  # an f-string: its text, "{}" for each value
                text = "".join(
                    v.value if isinstance(v, ast.Constant) else "{}" for v in node.values
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            if SQL.search(text):
                holders.add(name)
                assert not TABLE.search(text), (name, text)
    assert holders == readme_sql_holders()


def readme_sql_holders() -> set[str]:
    """The modules README's paragraph on hand-written SQL names, up to "No other module"."""
    text = (ROOT / "README.md").read_text()
    paragraph = text[text.index("are hand-written SQL in") : text.index("No\nother module")]
    paths = re.findall(r"`((?:\w+/)*\w+\.py)`", paragraph)
    names = {path.removesuffix(".py").replace("/", ".") for path in paths}
    return {n if n.startswith("annotation.") else f"annotation.{n}" for n in names}


def test_no_file_cites_a_document_the_repository_lacks():
    cited = re.compile(r"docs/[\w./-]+\.md")
    missing = set()
    for path in [*ROOT.glob("*.md"), *ROOT.glob("[!.]*/**/*")]:
        if path.suffix not in {".py", ".md", ".html", ".js", ".css"} or ".venv" in path.parts:
            continue
        text = path.read_text()
        assert not re.search(r"\bSPEC\b", text), path
        missing |= {c for c in cited.findall(text) if not (ROOT / c).exists()}
    assert missing == set()


def test_one_module_owns_the_release_bundle_format():
    owners = [
        name
        for name, path in product_modules().items()
        if "sets.jsonl" in (text := path.read_text()) and "examples.jsonl" in text
    ]
    assert owners == ["annotation.releases.bundle"]


def test_the_readmes_map_names_every_module_and_folder():
    """README's map of the tree missed nine modules (about 1,580 lines): every folder of the
    product appears in it as `name/`, every module by its name."""
    text = (ROOT / "README.md").read_text()
    found = re.search(r"```\n(config/.*?)```", text, re.S)
    assert found is not None, "README.md has no map of the tree starting with config/"
    block = found.group(1)
    words = set(re.findall(r"\w+", block))
    missing = set()
    for app in ("annotation", "evaluation", "config"):
        for path in (ROOT / app).rglob("*.py"):
            parts = path.relative_to(ROOT).parts
            if "migrations" in parts or path.name == "__init__.py":
                continue
            missing |= {f"{folder}/" for folder in parts[1:-1] if f"{folder}/" not in block}
            if path.stem not in words:
                missing.add("/".join(parts))
    assert missing == set()


def test_no_function_is_a_maze():
    """Cyclomatic complexity (radon) of 20 at most: `import_sets` was 35 and a view 26, with a
    try in a try; above 20, a function is split into one function per step."""
    from radon.complexity import cc_visit

    tangled = {
        f"{name}:{block.name}": block.complexity
        for name, path in product_modules().items()
        for block in cc_visit(path.read_text())
        if block.complexity > 20
    }
    assert tangled == {}


# Tables the formatter would spread one item a line; nothing else of the product is packed.
FORMATTED_BY_HAND = {"evaluation.runners.keyword"}


def test_the_product_is_formatted_as_the_formatter_writes_it():
    packed = {
        name
        for name, path in product_modules().items()
        if re.search(r"#\s*fmt:\s*(skip|off)", path.read_text())
    }
    assert packed == FORMATTED_BY_HAND
