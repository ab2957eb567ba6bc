"""The package itself: its docstring example runs, every public name is documented and typed."""

import ast
import doctest
import inspect
from pathlib import Path

import telamalloc
import telamalloc._native as native

STUBS = Path(telamalloc.__file__).with_name("_native.pyi")


def test_the_docstring_example_runs():
    failed, attempted = doctest.testmod(telamalloc)
    assert attempted > 0 and failed == 0


def test_every_public_name_has_a_docstring():
    for name in telamalloc.__all__:
        if name.startswith("__"):
            continue
        item = getattr(telamalloc, name)
        assert inspect.getdoc(item), name


def test_the_stubs_cover_the_module_and_nothing_else():
    tree = ast.parse(STUBS.read_text())
    stubbed = {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    stubbed |= {
        node.target.id
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    public = {name for name in dir(native) if not name.startswith("_")} | {"__version__"}
    assert stubbed == public
    assert set(telamalloc.__all__) == public
    exported = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
    )
    assert set(ast.literal_eval(exported)) == set(native.__all__) == public
    assert Path(telamalloc.__file__).with_name("py.typed").exists()


def _arguments(function: ast.FunctionDef) -> list[str]:
    arguments = function.args.posonlyargs + function.args.args
    return [a.arg for a in arguments if a.arg not in ("self", "cls")]


def test_the_stubbed_signatures_match():
    tree = ast.parse(STUBS.read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            real = list(inspect.signature(getattr(native, node.name)).parameters)
            assert _arguments(node) == real, node.name
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(native, node.name)
        for method in node.body:
            if not isinstance(method, ast.FunctionDef):
                continue
            properties = [d for d in method.decorator_list if getattr(d, "id", "") == "property"]
            if properties:
                assert isinstance(inspect.getattr_static(cls, method.name), type(native.Buffer.id))
                continue
            if method.name.startswith("__") and method.name != "__new__":
                continue
            target = cls if method.name == "__new__" else getattr(cls, method.name)
            real = [p for p in inspect.signature(target).parameters if p != "self"]
            assert _arguments(method) == real, f"{node.name}.{method.name}"
