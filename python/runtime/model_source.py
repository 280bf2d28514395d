"""Which model a run trains and where its code comes from, for the
Dispatcher's start-up line, and a warning when an edited library.py edits
a model other than the one the run selects (docs/models.md's recipes edit
NegCBOW, "neg_autograd", while "neg" is the default).

Reads source files with ast; runs nothing.  Prefix helpers with _.
"""

import ast
import inspect
import os


def describe(models: dict, name: str) -> str:
    """'neg_autograd (NegCBOW in /path/mymodel/library.py)': the name
    selected, its class and the file the class comes from."""
    cls = models.get(name)
    if cls is None:
        return str(name)
    try:
        where = os.path.abspath(inspect.getsourcefile(cls) or "?")
    except TypeError:
        where = "?"
    return f"{name} ({cls.__qualname__} in {where})"


def differs(library_file: str, bundled_file: str) -> bool:
    """Whether ``library_file`` is another file than ``bundled_file`` with
    other contents (False where either cannot be read)."""
    try:
        if os.path.samefile(library_file, bundled_file):
            return False
        with open(library_file, "rb") as mine, open(bundled_file, "rb") as bundled:
            return mine.read() != bundled.read()
    except OSError:
        return False


def edit_warning(models: dict, name: str, library_file: str,
                 bundled_file: str) -> str:
    """A warning when ``library_file`` edits model classes of the bundled
    ``bundled_file`` (or adds some) and the class selected by ``name`` is
    none of them, nor derived from one; else "".  A class counts as edited
    when its code differs from the bundled one's, or when it uses a
    module-level function or constant whose code differs."""
    if not differs(library_file, bundled_file):
        return ""
    try:
        with open(library_file, encoding="utf-8") as f:
            mine = _top_level(f.read())
        with open(bundled_file, encoding="utf-8") as f:
            bundled = _top_level(f.read())
    except (OSError, SyntaxError, ValueError):
        return ""
    edited = _edited_classes(mine, bundled)
    selected = models.get(name)
    if not edited or selected is None:
        return ""
    own = {c.__name__ for c in inspect.getmro(selected)
           if getattr(c, "__module__", None) == "library"}
    if own & set(edited):
        return ""
    names = {cls.__name__: key for key, cls in models.items()
             if getattr(cls, "__module__", None) == "library"}
    listed = ", ".join(f"{c} (model {names[c]})" if c in names
                       else f"{c} (in no MODELS entry)" for c in edited)
    hint = next((f"select it with --model {names[c]} or \"model\": "
                 f"\"{names[c]}\" in cfg.json" for c in edited if c in names),
                "add it to MODELS and select it with --model NAME")
    return (f"{library_file} edits {listed}, but this run trains model "
            f"{name} ({selected.__qualname__}), which that edit does not "
            f"change: {hint}")


def _top_level(source):
    """{name: (kind, ast dump, names it uses)} of a module's top-level
    classes, functions and assignments."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) \
                else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
        else:
            continue
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        kind = "class" if isinstance(node, ast.ClassDef) else "other"
        for name in names:
            out[name] = (kind, ast.dump(node), used)
    return out


def _edited_classes(mine, bundled):
    """The classes of ``mine`` that differ from ``bundled``'s or are new,
    or that use (by name) a function or constant that differs, in source
    order."""
    changed = {name for name, (_, dump, _) in mine.items()
               if name not in bundled or bundled[name][1] != dump}
    changed.discard("MODELS")
    helpers = {n for n in changed if mine[n][0] != "class"}
    return [name for name, (kind, _, used) in mine.items()
            if kind == "class" and (name in changed or used & helpers)]
