"""python/runtime/model_source.py: what the start-up line says of the model, and the warning for an edited library.py
whose edit is not the model the run selects."""

import shutil
import subprocess

from conftest import PYTHON_DIR
from runtime import model_source

RECIPES = PYTHON_DIR.parent / "tests" / "python" / "recipes"


def models(*names):
    """A MODELS dict of stand-in classes, as defined in library.py: {"neg_autograd": NegCBOW, ...}."""
    classes = {n: type(n, (), {"__module__": "library"}) for n in names}
    out = {"neg": type("FusedNegCBOW", (), {"__module__": "runtime.fused_neg"})}
    out.update({"neg_autograd": classes.get("NegCBOW"), "softmax": classes.get("SoftmaxCBOW")})
    return {k: v for k, v in out.items() if v is not None}


def copy_library(tmp_path, recipe=None, append=""):
    lib = tmp_path / "library.py"
    shutil.copy(PYTHON_DIR / "library.py", lib)
    if recipe:
        subprocess.run(["patch", "--quiet", str(lib), str(RECIPES / f"{recipe}.diff")], check=True, timeout=30)
    with open(lib, "a") as f:
        f.write(append)
    return str(lib)


def test_a_recipe_on_a_model_the_run_does_not_select_is_named(tmp_path):
    lib, bundled = copy_library(tmp_path, "sum_context"), str(PYTHON_DIR / "library.py")
    m = models("NegCBOW", "SoftmaxCBOW")
    warning = model_source.edit_warning(m, "neg", lib, bundled)
    assert warning.startswith(f"{lib} edits NegCBOW (model neg_autograd), but this run trains model neg")
    assert "--model neg_autograd" in warning
    assert model_source.edit_warning(m, "neg_autograd", lib, bundled) == ""
    assert "edits NegCBOW" in model_source.edit_warning(m, "softmax", lib, bundled)


def test_an_unedited_copy_or_the_bundled_file_gives_no_warning(tmp_path):
    m = models("NegCBOW", "SoftmaxCBOW")
    bundled = str(PYTHON_DIR / "library.py")
    assert model_source.edit_warning(m, "neg", copy_library(tmp_path), bundled) == ""
    assert model_source.edit_warning(m, "neg", bundled, bundled) == ""


def test_an_edited_helper_counts_for_the_classes_that_use_it(tmp_path):
    # A library.py whose NegCBOW uses a module-level helper, and a copy with the helper (only) edited.
    text = (PYTHON_DIR / "library.py").read_text()
    use = "        return negative_sampling(h, p.out_vectors, target, noise)\n"
    assert use in text
    text = text.replace(use, use.replace("return ", "return _scaled(")[:-1] + ")\n")
    text += "\n\ndef _scaled(x):\n    return x\n"
    (tmp_path / "bundled").mkdir()
    bundled, lib = tmp_path / "bundled" / "library.py", tmp_path / "library.py"
    bundled.write_text(text)
    lib.write_text(text.replace("    return x\n", "    return 2 * x\n"))
    warning = model_source.edit_warning(models("NegCBOW", "SoftmaxCBOW"), "neg", str(lib), str(bundled))
    assert "edits NegCBOW (model neg_autograd)" in warning and "SoftmaxCBOW" not in warning


def test_a_new_class_selected_by_its_own_name_gives_no_warning(tmp_path):
    lib = copy_library(tmp_path, append="\nclass Mine(NegCBOW):\n    negatives = 3\n\nMODELS['mine'] = Mine\n")
    m = models("NegCBOW", "SoftmaxCBOW")
    mine = type("Mine", (m["neg_autograd"],), {"__module__": "library"})
    m["mine"] = mine
    bundled = str(PYTHON_DIR / "library.py")
    assert model_source.edit_warning(m, "mine", lib, bundled) == ""
    assert "edits Mine (model mine)" in model_source.edit_warning(m, "neg", lib, bundled)


def test_describe_names_the_model_its_class_and_file():
    import library
    assert model_source.describe(library.MODELS, "neg_autograd") == \
        f"neg_autograd (NegCBOW in {PYTHON_DIR.resolve() / 'library.py'})"
    assert model_source.describe(library.MODELS, "nope") == "nope"
