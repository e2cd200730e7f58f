"""What the engines suite's playout loop costs by itself: engines that do nothing, built as a
native core would be, so that the goal turns show the most any engine bound that way can reach.

Each probe is a state whose methods (new_match, is_over, seats_to_act, legal_actions,
apply_action, observation, events, scores, public_observation) return ready objects and change
nothing but a counter: a match is 100 decisions (Balloon's at 4 players, about), one seat, 8
legal actions. Built at run time into a scratch directory, each where its tools are:
- "C API": a C extension type written against CPython's C API (gcc and Python's headers, the
  mypyc build's tools), methods called by vectorcall;
- "pybind11": the same type bound with pybind11 (g++ and the pybind11 package).
A probe whose tools are missing is left out, saying why.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

DECISIONS_PER_MATCH = 100

C_API = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
typedef struct { PyObject_HEAD int left; } Noop;
static PyObject *seats, *legal, *nothing;
static PyObject *noop_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    Noop *self = (Noop *)type->tp_alloc(type, 0);
    if (self) self->left = DECISIONS;
    return (PyObject *)self;
}
static PyObject *is_over(Noop *self, PyObject *unused) { return PyBool_FromLong(self->left <= 0); }
static PyObject *seats_to_act(Noop *self, PyObject *unused) { return Py_NewRef(seats); }
static PyObject *legal_actions(Noop *self, PyObject *seat) { return Py_NewRef(legal); }
static PyObject *apply_action(Noop *self, PyObject *const *args, Py_ssize_t n) {
    if (n != 2) { PyErr_SetString(PyExc_TypeError, "apply_action(seat, action)"); return NULL; }
    self->left--;
    Py_RETURN_NONE;
}
static PyObject *observation(Noop *self, PyObject *seat) { return Py_NewRef(nothing); }
static PyObject *no_args(Noop *self, PyObject *unused) { return Py_NewRef(nothing); }
static PyObject *events(Noop *self, void *unused) { return Py_NewRef(nothing); }
static PyMethodDef methods[] = {
    {"is_over", (PyCFunction)is_over, METH_NOARGS, NULL},
    {"seats_to_act", (PyCFunction)seats_to_act, METH_NOARGS, NULL},
    {"legal_actions", (PyCFunction)legal_actions, METH_O, NULL},
    {"apply_action", (PyCFunction)(void (*)(void))apply_action, METH_FASTCALL, NULL},
    {"observation", (PyCFunction)observation, METH_O, NULL},
    {"scores", (PyCFunction)no_args, METH_NOARGS, NULL},
    {"public_observation", (PyCFunction)no_args, METH_NOARGS, NULL},
    {NULL}};
static PyGetSetDef getset[] = {{"events", (getter)events, NULL, NULL, NULL}, {NULL}};
static PyTypeObject NoopType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "noop_capi.Noop", .tp_basicsize = sizeof(Noop),
    .tp_flags = Py_TPFLAGS_DEFAULT, .tp_new = noop_new, .tp_methods = methods,
    .tp_getset = getset};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "noop_capi", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_noop_capi(void) {
    if (PyType_Ready(&NoopType) < 0) return NULL;
    seats = Py_BuildValue("(i)", 0);
    legal = Py_BuildValue("(iiiiiiii)", 0, 1, 2, 3, 4, 5, 6, 50);
    nothing = Py_BuildValue("()");
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddObjectRef(m, "Noop", (PyObject *)&NoopType) < 0) return NULL;
    return m;
}
"""

PYBIND11 = r"""
#include <pybind11/pybind11.h>
namespace py = pybind11;
// held for the process's life (never destroyed after the interpreter has ended)
static py::tuple *seats, *legal, *nothing;
struct Noop {
    int left = DECISIONS;
    explicit Noop(py::handle seed) {}
};
PYBIND11_MODULE(noop_pybind11, m) {
    seats = new py::tuple(py::make_tuple(0));
    legal = new py::tuple(py::make_tuple(0, 1, 2, 3, 4, 5, 6, 50));
    nothing = new py::tuple();
    py::class_<Noop>(m, "Noop")
        .def(py::init<py::handle>())
        .def("is_over", [](Noop &s) { return s.left <= 0; })
        .def("seats_to_act", [](Noop &s) { return *seats; })
        .def("legal_actions", [](Noop &s, py::handle seat) { return *legal; })
        .def("apply_action", [](Noop &s, py::handle seat, py::handle action) { s.left--; })
        .def("observation", [](Noop &s, py::handle seat) { return *nothing; })
        .def("scores", [](Noop &s) { return *nothing; })
        .def("public_observation", [](Noop &s) { return *nothing; })
        .def_property_readonly("events", [](Noop &s) { return *nothing; });
}
"""


class NoopGame:
    """A game whose new_match(seed) is a probe's state (the type itself: no Python call)."""

    def __init__(self, state_type: type):
        self.new_match = state_type


def _compile(command: list[str], what: str) -> str | None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"{what} did not build: {(done.stderr or done.stdout)[-300:]}"
    return None


def build(scratch: Path) -> tuple[dict[str, type], list[str]]:
    """The probes' state types by name, and why any is missing."""
    include = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    flags = ["-O2", "-shared", "-fPIC", f"-I{include}", f"-DDECISIONS={DECISIONS_PER_MATCH}"]
    types: dict[str, type] = {}
    missing: list[str] = []
    jobs: list[tuple[str, str, str, Callable[[], list[str] | str]]] = []
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]

    def c_api() -> list[str] | str:
        if shutil.which(cc) is None or not Path(include, "Python.h").exists():
            return "no C compiler or no Python.h"
        return [cc, *flags, "-o"]

    def pybind11() -> list[str] | str:
        if importlib.util.find_spec("pybind11") is None:
            return "pybind11 is not installed (pip install pybind11)"
        if shutil.which("g++") is None:
            return "no g++"
        import pybind11 as pb

        return ["g++", "-std=c++17", *flags, f"-I{pb.get_include()}", "-o"]

    jobs.append(("C API", "noop_capi", C_API, c_api))
    jobs.append(("pybind11", "noop_pybind11", PYBIND11, pybind11))
    for label, module, source, command in jobs:
        how = command()
        if isinstance(how, str):
            missing.append(f"no-op engine, {label}: {how}")
            continue
        path = scratch / (module + (".c" if label == "C API" else ".cpp"))
        path.write_text(source)
        target = scratch / (module + suffix)
        why = _compile([*how, str(target), str(path)], f"the {label} probe")
        if why is not None:
            missing.append(why)
            continue
        types[label] = _load(module, target).Noop
    return types, missing


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sides(playouts: Callable[..., Any], log: Callable[..., None]) -> dict[str, Any]:
    """The probes as goal-turn sides (`playouts(game, reads)` builds one, as the engines suite's
    Playouts), plain and reading as the referee does; built in a scratch directory that lives
    as long as this process (the extensions stay loaded)."""
    scratch = Path(tempfile.mkdtemp(prefix="arena-engine-calls-"))
    try:
        types, missing = build(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # loaded modules stay mapped
    for why in missing:
        log(why)
    out: dict[str, Any] = {}
    for label, state_type in types.items():
        out[f"no-op engine {label}"] = playouts(NoopGame(state_type))
        out[f"no-op engine {label}, reading referee"] = playouts(NoopGame(state_type), "referee")
    return out
