"""The reference pages (chapter 35): every class the package exports gets a header its page can show."""
import importlib
import inspect
import pkgutil

import santorini_az
from nbdev.showdoc import show_doc
from santorini_az.engine import Tree
from santorini_az.showdoc import CourseRenderer


def exported_classes():
    "Every class a module of the package lists in `__all__` and defines itself."
    for info in pkgutil.iter_modules(santorini_az.__path__):
        if info.name.startswith("_"): continue
        module = importlib.import_module(f"santorini_az.{info.name}")
        for name in getattr(module, "__all__", []):
            value = getattr(module, name)
            if inspect.isclass(value) and value.__module__ == module.__name__: yield value


def test_no_exported_class_is_signed_with_object_s_arguments():
    classes = list(exported_classes())
    assert len(classes) > 60
    unsigned = [cls.__qualname__ for cls in classes if "*args, **kwargs" in CourseRenderer(cls)._repr_markdown_()]
    assert unsigned == []


def test_show_doc_uses_the_course_renderer_on_every_page():
    rendered = show_doc(Tree)  # pyproject.toml's [tool.nbdev] renderer
    assert isinstance(rendered, CourseRenderer)
    text = rendered._repr_markdown_()
    assert "class Tree(NamedTuple):\n    node_heights: np.ndarray" in text
    assert "```text\nnode_heights   [B, N, 25] int8" in text and "#LNone" not in text


def test_a_class_nbdev_signs_keeps_nbdevs_signature():
    from nbdev.showdoc import BasicMarkdownRenderer
    signed = [cls for cls in exported_classes() if "*args, **kwargs" not in str(BasicMarkdownRenderer(cls).dm)]
    assert len(signed) > 60
    changed = [cls.__qualname__ for cls in signed if str(CourseRenderer(cls).dm) != str(BasicMarkdownRenderer(cls).dm)]
    assert changed == []  # ExerciseFailed, the web servers and GodInspectWidget lost theirs to a header once
