/* What both games' native cores (each game package's _native.c) share: ints as objects, reading ints,
 * frozen slotted dataclass instances filled without their __init__, the recycling of the last
 * observation, and reading the rules' constants at configure(). Included by each core, which
 * first defines PY_SSIZE_T_CLEAN and includes Python.h; compiled into each (static), and part of
 * each core's SOURCE_DIGEST (arena/games/engines.py, native_source_digest). */
#ifndef ARENA_NATIVE_CORE_H
#define ARENA_NATIVE_CORE_H

#include <structmember.h>

/* ints 0..255 as objects, looked up once (CPython keeps one object for each: this saves a
 * call into it per int, on the hot path); filled by small_ints_init() at configure */
#define NUM_SMALL 256
static PyObject *small_ints_table[NUM_SMALL];

static int small_ints_init(void) {
    for (int i = 0; i < NUM_SMALL; i++)
        if (!small_ints_table[i] && !(small_ints_table[i] = PyLong_FromLong(i))) return -1;
    return 0;
}

static inline PyObject *new_int(long v) {
    return v >= 0 && v < NUM_SMALL && small_ints_table[v] ? Py_NewRef(small_ints_table[v]) : PyLong_FromLong(v);
}

static PyObject *ints(const int *values, int count) {
    /* a tuple of ints */
    PyObject *t = PyTuple_New(count);
    if (!t) return NULL;
    for (int i = 0; i < count; i++) {
        PyObject *v = new_int(values[i]);
        if (!v) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *int_list(const int *values, int count) {
    /* a list of ints */
    PyObject *l = PyList_New(count);
    if (!l) return NULL;
    for (int i = 0; i < count; i++) {
        PyObject *v = new_int(values[i]);
        if (!v) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, i, v);
    }
    return l;
}

static int read_ints(PyObject *seq, int *out, int max, const char *what) {
    /* a sequence of at most max ints into out; its length, or -1 with an error set */
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > max) { Py_DECREF(fast); PyErr_Format(PyExc_ValueError, "%s: too long", what); return -1; }
    for (Py_ssize_t i = 0; i < len; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
        out[i] = (int)v;
    }
    Py_DECREF(fast);
    return (int)len;
}

static long small_int(PyObject *o, int *ok) {
    /* an exact int's value; *ok 0 for anything else (a bool, a float, a huge int) */
    *ok = 0;
    if (!PyLong_CheckExact(o)) return 0;
    int overflow;
    long v = PyLong_AsLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return 0; }
    *ok = 1;
    return v;
}

static int refuse(PyObject *state, PyObject *seat, PyObject *action) {
    /* the state's _refuse (its native.py) raises the engine's IllegalActionError, with its reason */
    PyObject *r = PyObject_CallMethod(state, "_refuse", "OO", seat, action);
    Py_XDECREF(r);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "_refuse did not raise");
    return -1;
}

/* ---- frozen, slotted dataclass instances (observations, events) ---------------------------- */

static PyObject *fill(PyTypeObject *type, const Py_ssize_t *offsets, PyObject **values, int count) {
    /* an instance with its slots written directly (its __init__ sets each through
     * object.__setattr__, twenty times slower); steals values, even when it fails. Every slot is
     * one of the fields, each written here, so the object need not be zeroed first as tp_alloc
     * does; it is tracked once they are (slot_offsets checks the class is so) */
    PyObject *o = _PyObject_GC_New(type);
    if (!o) {
        for (int i = 0; i < count; i++) Py_XDECREF(values[i]);
        return NULL;
    }
    for (int i = 0; i < count; i++) *(PyObject **)((char *)o + offsets[i]) = values[i];
    PyObject_GC_Track(o);
    return o;
}

/* Recycling (as CPython's zip recycles its result tuple): the last observation a state made,
 * once nothing else holds it (its refcount 1: only the state's own reference), is given new
 * values and handed out again instead of a new one, and so is a tuple of its that only it
 * holds; nobody can tell (the object was unreachable: a new one could have had its address).
 * Not where the class could be reached otherwise (weak references, a __dict__, a finalizer:
 * recycling_allowed, at configure). */
static int recycling;

static PyObject *recyclable(PyObject *o) {
    return recycling && o && Py_REFCNT(o) == 1 ? o : NULL;
}

static PyObject *refill(PyObject *o, const Py_ssize_t *offsets, PyObject **values, int count) {
    /* o (recyclable) with these values (stolen) in its slots; a new reference */
    for (int i = 0; i < count; i++) {
        PyObject **slot = (PyObject **)((char *)o + offsets[i]), *old = *slot;
        *slot = values[i];
        Py_XDECREF(old);
    }
    return Py_NewRef(o);
}

/* ---- configure: the rules' constants and classes from the engine ----------------------------- */

static int get_int(PyObject *mod, const char *name, int *out) {
    PyObject *v = PyObject_GetAttrString(mod, name);
    if (!v) return -1;
    *out = (int)PyLong_AsLong(v);
    Py_DECREF(v);
    return PyErr_Occurred() ? -1 : 0;
}

static int get_ints(PyObject *mod, const char *name, int *out, int max) {
    PyObject *v = PyObject_GetAttrString(mod, name);
    if (!v) return -1;
    int r = read_ints(v, out, max, name);
    Py_DECREF(v);
    return r;
}

static int slot_offsets(PyTypeObject *type, Py_ssize_t *offsets, int count) {
    /* the offsets of a slotted dataclass's fields, in field order (fill writes every slot,
     * unzeroed: the fields must be all there is) */
    if (type->tp_basicsize != (Py_ssize_t)(sizeof(PyObject) + count * sizeof(PyObject *)) || type->tp_itemsize
        || type->tp_dictoffset || type->tp_weaklistoffset || !(type->tp_flags & Py_TPFLAGS_HAVE_GC)) {
        PyErr_Format(PyExc_TypeError, "%s is not a slotted dataclass of its fields alone", type->tp_name);
        return -1;
    }
    PyObject *fields = PyObject_GetAttrString((PyObject *)type, "__dataclass_fields__");
    if (!fields) return -1;
    PyObject *names = PySequence_List(fields); /* a dict's keys, in field order */
    Py_DECREF(fields);
    if (!names) return -1;
    if (PyList_GET_SIZE(names) != count) {
        Py_DECREF(names);
        PyErr_Format(PyExc_TypeError, "%s has not %d fields", type->tp_name, count);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        PyObject *d = PyObject_GetAttr((PyObject *)type, PyList_GET_ITEM(names, i));
        if (!d || Py_TYPE(d) != &PyMemberDescr_Type) {
            Py_XDECREF(d);
            Py_DECREF(names);
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s is not slotted", type->tp_name);
            return -1;
        }
        offsets[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
    }
    Py_DECREF(names);
    return 0;
}

static int recycling_allowed(PyTypeObject *type, const int *at, const char *const *names, int count) {
    /* whether an observation class may be recycled: its fields at `at` are named `names` (the
     * tuples the core refills), and nothing but its references reaches an instance (no weak
     * references, __dict__ or finalizer); -1 with an error set */
    PyObject *fields = PyObject_GetAttrString((PyObject *)type, "__dataclass_fields__");
    PyObject *list = fields ? PySequence_List(fields) : NULL;
    Py_XDECREF(fields);
    if (!list) return -1;
    int ok = !type->tp_weaklistoffset && !type->tp_dictoffset && !type->tp_del && !type->tp_finalize;
    for (int i = 0; ok && i < count; i++) {
        PyObject *name = at[i] < PyList_GET_SIZE(list) ? PyList_GET_ITEM(list, at[i]) : NULL;
        ok = name && PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, names[i]) == 0;
    }
    Py_DECREF(list);
    return ok;
}

#endif
