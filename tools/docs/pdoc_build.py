#!/usr/bin/env python3
"""The Python API reference (`make docs`): pdoc over the installed ``cursus``
package, its ``.pyi`` stubs included (pdoc reads the stub of the native
module ``cursus._cursus`` for signatures and types).

    python tools/docs/pdoc_build.py --out DIR --counts FILE

Documents ``cursus``, ``cursus.aio`` and ``cursus.otel`` (the tracing layer;
the OpenTelemetry API it imports is in the tools' requirements). The command
line ``cursus.cli`` is documented in docs/cli.md, not as an API. Any warning pdoc gives, or a
public name without a docstring, fails the build. pdoc is also shown the
docstrings the package has where pdoc alone does not look: `#:` comments
above a variable, a name imported from a private module of the package, and
the source of a class whose __module__ is the public package. Writes
{"documented": N, "undocumented": M, "undocumented_names": [...]} to FILE:
the public modules, classes, functions, methods, properties and variables
with and without a docstring.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import inspect
import json
import pathlib
import re
import shutil
import sys
import warnings
import types
from typing import Callable, Dict, List, Optional, Union

import pdoc
import pdoc.doc
import pdoc.doc_ast
import pdoc.doc_pyi
import pdoc.render

MODULES = ["cursus", "cursus.aio", "cursus.otel"]


def stub_aliases(module_name: str) -> Dict[str, object]:
    """The type aliases a module's .pyi stub defines (`Key = Union[...]`),
    evaluated over the runtime module: pdoc cannot import the stub itself
    (its annotations name classes before they are defined), and aliases
    exist only there. Imports and assignments of the stub's top level run
    in order; classes and functions are the runtime module's own."""
    runtime = importlib.import_module(module_name)
    stub_file = pdoc.doc_pyi.find_stub_file(module_name)
    namespace: Dict[str, object] = {**vars(runtime), "__package__": runtime.__package__}
    if stub_file is None:
        return {}
    before = set(namespace)
    for node in ast.parse(stub_file.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign)):
            code = compile(ast.Module(body=[node], type_ignores=[]), str(stub_file), "exec")
            try:
                exec(code, namespace)
            except (NameError, ImportError, AttributeError, TypeError):
                continue  # an alias of names the runtime lacks: left out
    return {k: v for k, v in namespace.items() if k not in before}


def annotation_namespaces(package: str) -> None:
    """Lets pdoc evaluate every annotation of the package (in this process
    only). pdoc evaluates a class's annotations in the namespace of its
    __module__, and the package gives the classes it defines in private
    modules a public __module__ (`cursus`), where `Optional` and the names
    imported only for type checkers (`if TYPE_CHECKING: from ._cursus
    import ...`) are missing. Each private module's names, those imports
    (from the stub's aliases where only the stub has them) included, are
    added to the public module's namespace where it lacks them; its
    __all__, which decides what pdoc shows, is unchanged."""
    root = importlib.import_module(package)
    for path in sorted(pathlib.Path(root.__file__ or "").parent.glob("*.py")):
        name = package if path.stem == "__init__" else f"{package}.{path.stem}"
        module = importlib.import_module(name)
        names = {k: v for k, v in vars(module).items() if not k.startswith("__")}
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                for stmt in node.body:
                    if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
                        source = f"{package}.{stmt.module}"
                        found = {**vars(importlib.import_module(source)), **stub_aliases(source)}
                        for alias in stmt.names:
                            if alias.name in found:
                                names[alias.asname or alias.name] = found[alias.name]
        for key, value in names.items():
            if not hasattr(module, key):
                setattr(module, key, value)
        targets = {obj.__module__ for obj in names.values() if isinstance(obj, type)}
        for target in targets - {name}:
            if target.split(".")[0] == package and target in sys.modules:
                for key, value in names.items():
                    vars(sys.modules[target]).setdefault(key, value)


def module_source(module: types.ModuleType) -> Optional[str]:
    """A module's Python source, or its .pyi stub's for a native module."""
    try:
        return inspect.getsource(module)
    except (OSError, TypeError):
        stub = pdoc.doc_pyi.find_stub_file(module.__name__)
        return stub.read_text() if stub else None


def comment_docs(module: types.ModuleType) -> Dict[str, str]:
    """A module's variables documented by `#:` comment lines right above
    them (Sphinx's form, which the package uses for its type aliases and
    pdoc does not read)."""
    source = module_source(module)
    if source is None:
        return {}
    lines = source.splitlines()
    docs: Dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        above: List[str] = []
        row = node.lineno - 2
        while names and row >= 0 and lines[row].lstrip().startswith("#:"):
            above.insert(0, lines[row].lstrip()[2:].strip())
            row -= 1
        if above:
            docs[names[0]] = " ".join(above)
    return docs


def class_info(cls: type, package: str) -> pdoc.doc_ast.AstInfo:
    """pdoc's reading of a class's source (its attributes' docstrings), from
    the module of the package that defines it: the package gives the classes
    of its private modules a public __module__ (`cursus`), where pdoc does
    not find their source."""
    root = pathlib.Path(importlib.import_module(package).__file__ or "").parent
    for path in sorted(root.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and node.name == cls.__qualname__:
                return pdoc.doc_ast._walk_tree(node)
    return pdoc.doc_ast.AstInfo({}, {}, {})


def read_comment_docs(package: str) -> None:
    """Makes pdoc's reading of the variable docstrings of the package's
    modules (in this process) add their comment_docs, and give a name a
    module imports from another module of the package (`from ._rebalance
    import RebalanceCallback`) the docstring it has there."""
    walk: Callable[[Union[types.ModuleType, type]], pdoc.doc_ast.AstInfo] = pdoc.doc_ast.walk_tree

    def own_docs(module: types.ModuleType) -> Dict[str, str]:
        try:
            found = walk(module).var_docstrings
        except (OSError, TypeError, SyntaxError):  # a native module
            found = {}
        return {**comment_docs(module), **found}

    def imported_docs(module: types.ModuleType) -> Dict[str, str]:
        source = module_source(module)
        docs: Dict[str, str] = {}
        base = module.__name__ if hasattr(module, "__path__") else module.__name__.rsplit(".", 1)[0]
        for node in ast.parse(source or "").body:
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                found = own_docs(importlib.import_module(f"{base}.{node.module}"))
                docs.update({a.asname or a.name: found[a.name] for a in node.names if a.name in found})
        return docs

    @functools.cache
    def walk_tree(obj: Union[types.ModuleType, type]) -> pdoc.doc_ast.AstInfo:
        if isinstance(obj, type) and obj.__module__.split(".")[0] == package:
            return class_info(obj, package)
        if not (isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] == package):
            return walk(obj)
        info = walk(obj)
        docs = {**imported_docs(obj), **comment_docs(obj), **info.var_docstrings}
        return pdoc.doc_ast.AstInfo(docs, info.func_docstrings, info.annotations)

    pdoc.doc_ast.walk_tree = walk_tree  # type: ignore[assignment]


SAME_PAGE_LINK = re.compile(r'<a href="#([^"]*)">(.*?)</a>')


def unlink_unrendered(out: pathlib.Path) -> int:
    """pdoc links names to members it does not render: a class's private
    base (`class Producer(_Client)`) and what it inherits from it, members
    without a docstring that docstrings mention (`state`). Those links go,
    the names stay as text; a page without a title (pdoc's redirecting
    index.html) gets one. Returns how many links were removed."""
    removed = 0
    for page in out.rglob("*.html"):
        text = page.read_text()
        ids = set(re.findall(r'id="([^"]+)"', text))

        def unlink(m: "re.Match[str]") -> str:
            nonlocal removed
            if m.group(1) in ids:
                return m.group(0)
            removed += 1
            return m.group(2)

        text = SAME_PAGE_LINK.sub(unlink, text)
        if "<title>" not in text:
            text = text.replace("</head>", "<title>cursus: Python API</title>\n</head>", 1)
        page.write_text(text)
    return removed


def public(name: str) -> bool:
    """What pdoc shows: no leading underscore (dunders aside, which it shows
    only with a docstring of their own)."""
    return not name.startswith("_")


def tally(module: pdoc.doc.Module) -> Dict[str, List[str]]:
    """Public items of a module (its __all__ when it has one), by whether
    they have a docstring."""
    seen: Dict[str, List[str]] = {"documented": [], "undocumented": []}

    def visit(item: pdoc.doc.Doc) -> None:  # type: ignore[type-arg]
        key = "documented" if item.docstring.strip() else "undocumented"
        seen[key].append(item.fullname)
        if isinstance(item, pdoc.doc.Class):
            for member in item.own_members:
                if public(member.name):
                    visit(member)

    visit(module)
    exported = getattr(module.obj, "__all__", None)
    for name, member in module.members.items():
        if (name in exported) if exported is not None else public(name):
            visit(member)
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--counts", type=pathlib.Path, required=True)
    args = parser.parse_args()
    pdoc.render.configure(
        docformat="restructuredtext",
        search=True,
        show_source=False,
        footer_text="Cursus SDK: the cursus Python package",
    )
    if args.out.exists():
        shutil.rmtree(args.out)
    annotation_namespaces("cursus")
    read_comment_docs("cursus")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*MODULES, output_directory=args.out)
        unlink_unrendered(args.out)
        counts: Dict[str, List[str]] = {"documented": [], "undocumented": []}
        for name in MODULES:
            for key, names in tally(pdoc.doc.Module.from_name(name)).items():
                counts[key].extend(names)
    if caught:
        for w in caught:
            print(f"pdoc: warning: {w.message} ({w.filename}:{w.lineno})", file=sys.stderr)
        print(f"pdoc: {len(caught)} warnings", file=sys.stderr)
        return 1
    if counts["undocumented"]:
        print(f"pdoc: {len(counts['undocumented'])} public names without a docstring:\n  "
              + "\n  ".join(sorted(counts["undocumented"])), file=sys.stderr)
        return 1
    args.counts.parent.mkdir(parents=True, exist_ok=True)
    args.counts.write_text(
        json.dumps(
            {
                "documented": len(counts["documented"]),
                "undocumented": len(counts["undocumented"]),
                "undocumented_names": sorted(counts["undocumented"]),
            },
            indent=1,
        )
        + "\n"
    )
    print(
        f"pdoc: {', '.join(MODULES)} -> {args.out}: {len(counts['documented'])} documented, "
        f"{len(counts['undocumented'])} without a docstring"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
