/* Balloon Challenge's native core: the hot path of the rules (docs/rules/balloon.md), written
 * against CPython's C API. Built by scripts/build_engines.py into _native_core; used through
 * arena/games/balloon/native.py, which hands everything cold (events, feature values, refusals'
 * reasons, snapshots, sampled states) to the plain engine (engine.py) on a plain state made from
 * this core's fields. tests/games/test_engine_builds.py holds it equal to the plain engine.
 *
 * Rule constants are not restated here: configure() reads them from engine.py at import. The
 * state is the plain engine's, field for field (engine.py's BalloonState), in C ints; the legal
 * actions of each seat stay a tuple (the hand, sorted, then DROP_OUT), rebuilt when a card leaves
 * it, and the log holds the plain engine's compact entries: plays and drop-outs as C records
 * (Entry), made the plain engine's tuples only when read, the rest as those tuples. Why the C API and not a binding
 * library: docs/architecture.md, "A native core".
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "../native_core.h"

#define MAX_SEATS 5
#define MAX_CARDS 64
#define MAX_ROUNDS 8
#define MAX_TURNS 64
#define MAX_COLOURS 8
#define NUM_OBS_FIELDS 15

/* ---- the rules' constants, from engine.py (configure) ---------------------------------- */
static int configured = 0;
static int num_cards, drop_out, num_rounds, black_index, first_drop_out_chips;
static int third_card_position, third_card_chips, early_len;
static int card_value[MAX_CARDS], card_colour[MAX_CARDS];
static int hand_size_by_round[MAX_ROUNDS], chip_points_by_round[MAX_ROUNDS];
static int chips_by_count[MAX_SEATS + 1], face_up_by_count[MAX_SEATS + 1];
static int early_chips_by_turn[MAX_TURNS];
/* the observation array's layout (engine.py's _FACE_UP_FEATURE, _TABLE_FEATURE, _FEATURE_TAIL) */
static int face_up_feature[MAX_CARDS], table_feature[MAX_CARDS], tail_at[MAX_SEATS + 1][12 + 6 * MAX_SEATS];
static Py_ssize_t feature_size[MAX_SEATS + 1];
static PyObject *s_round_start, *s_round_end, *s_match_end, *nobody;
static PyObject *seat_tuples[MAX_SEATS], *empty;
static PyTypeObject *obs_type, *played_type, *event_type;
static Py_ssize_t obs_offsets[NUM_OBS_FIELDS], played_offsets[3], event_offsets[3];
static PyObject *event_from_entry; /* engine.py's _event_from_entry, for the rarer entries */
static PyObject *k_play, *k_drop_out, *k_card, *k_turn, *k_third, *k_chips, *k_early, *k_first;
static PyObject *k_round_start, *k_round_end, *minus_one, *k_match_end, *k_totals, *k_ranks;
/* the data keys of round_start and round_end events, for the entry's items from 1 on */
static const char *round_start_keys[] = {"round", "start_seat", "hand_sizes", "face_up",
                                         "chips_in_middle", "first_drop_out_chips"};
static const char *round_end_keys[] = {"round", "size", "hands", "volumes", "complete",
                                       "complete_share", "chips", "round_scores", "totals"};
static PyObject *k_start_data[6], *k_end_data[9];

/* One entry of the log: a play (seat, card, turn, the third card's chips) or a drop-out (seat,
 * DROP_OUT, turn, early chips, first chip) in C, as the plain engine's tuple of those ints; any
 * other entry (a round's start or end, the match's end, a sampled state's start) is the plain
 * engine's tuple itself, held in the state's `others` list at `at`. */
enum { ENTRY_PLAY, ENTRY_DROP, ENTRY_OTHER };
typedef struct {
    int kind, seat, action, turn, a, b; /* (ENTRY_OTHER: a is the index in others) */
} Entry;

typedef struct {
    PyObject_HEAD
    PyObject *game;
    PyObject *decks;        /* tuple of each round's deck order */
    PyObject *legal[MAX_SEATS];
    PyObject *face_up;
    PyObject *undealt;
    Entry *log;             /* the log, `logged` entries of `log_room` */
    PyObject *others;       /* list: the log's entries other than plays and drop-outs */
    PyObject *events_cache; /* list of Event, read by native.py */
    PyObject *table;        /* the table's Played tuple as last built, from table_start */
    PyObject *spare;        /* the last observation made (recycled once only this holds it) */
    /* observations' tuples as last built, NULL once their field changes (stale) */
    PyObject *hand_sizes, *dropped_t, *chips_t, *totals_t;
    Py_ssize_t table_start, table_scanned, round_log, logged, log_room;
    int n, round, start, turn, pos, to_act, over, size, middle, first_chip, norder;
    int order[MAX_SEATS], vol[MAX_SEATS], counts[MAX_COLOURS];
    int chips[MAX_SEATS], dropped[MAX_SEATS], totals[MAX_SEATS];
} Core;

static PyTypeObject CoreType;
static PyObject *str_num_players;
static int core_init(Core *self, PyObject *game, int n, PyObject *decks);
static int start_round(Core *self, int round);


/* ---- helpers ------------------------------------------------------------------------------ */


#define SLOT(o, i) (*(PyObject **)((char *)(o) + obs_offsets[i]))
#define OBS_HAND 6 /* BalloonObservation's fields: hand, table */
#define OBS_TABLE 9

static PyObject *refilled(PyObject *old, PyObject *items, Py_ssize_t count) {
    /* items[:count] as a tuple: old refilled if only its holder holds it and it is that long */
    if (!old || !PyTuple_CheckExact(old) || Py_REFCNT(old) != 1 || PyTuple_GET_SIZE(old) != count || !count)
        return PyTuple_GetSlice(items, 0, count);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *was = PyTuple_GET_ITEM(old, i);
        PyTuple_SET_ITEM(old, i, Py_NewRef(PyTuple_GET_ITEM(items, i)));
        Py_DECREF(was);
    }
    return Py_NewRef(old);
}

static void stale(Core *self) {
    Py_CLEAR(self->hand_sizes);
    Py_CLEAR(self->dropped_t);
    Py_CLEAR(self->chips_t);
    Py_CLEAR(self->totals_t);
}

static PyObject *cached(PyObject **slot, const int *values, int count) {
    if (!*slot) *slot = ints(values, count);
    return Py_XNewRef(*slot);
}

/* tuples of hand sizes, shared by every state (a tuple is a value): an observation's hand_sizes
 * change at every play, and take few values (each under 32, at most MAX_SEATS of them) */
#define SIZES_SLOTS 1024
static struct {
    uint32_t key;
    PyObject *tuple;
} sizes_cache[SIZES_SLOTS];

static PyObject *shared_sizes(const int *sizes, int count) {
    uint32_t key = (uint32_t)count;
    for (int i = 0; i < count; i++) {
        if (sizes[i] < 0 || sizes[i] >= 32) return ints(sizes, count);
        key = key << 5 | (uint32_t)sizes[i];
    }
    uint32_t slot = (key * 2654435761U) >> 22; /* the top 10 bits of a multiplicative hash */
    if (sizes_cache[slot].tuple && sizes_cache[slot].key == key) return Py_NewRef(sizes_cache[slot].tuple);
    PyObject *t = ints(sizes, count);
    if (!t) return NULL;
    Py_XSETREF(sizes_cache[slot].tuple, Py_NewRef(t));
    sizes_cache[slot].key = key;
    return t;
}

static int log_push(Core *self, Entry e) {
    if (self->logged == self->log_room) {
        Py_ssize_t room = self->log_room ? 2 * self->log_room : 128;
        Entry *log = PyMem_Realloc(self->log, room * sizeof(Entry));
        if (!log) { PyErr_NoMemory(); return -1; }
        self->log = log;
        self->log_room = room;
    }
    self->log[self->logged++] = e;
    return 0;
}

static int log_append(Core *self, PyObject *entry) {
    /* an entry other than a play or a drop-out (stolen) */
    if (!entry) return -1;
    Entry e = {ENTRY_OTHER, -1, 0, 0, (int)PyList_GET_SIZE(self->others), 0};
    int r = PyList_Append(self->others, entry);
    Py_DECREF(entry);
    return r < 0 ? -1 : log_push(self, e);
}

static PyObject *entry_tuple(Core *self, const Entry *e) {
    /* the plain engine's tuple of an entry */
    if (e->kind == ENTRY_OTHER) return Py_NewRef(PyList_GET_ITEM(self->others, e->a));
    int values[5] = {e->seat, e->action, e->turn, e->a, e->b};
    return ints(values, e->kind == ENTRY_PLAY ? 4 : 5);
}

static PyObject *log_list(Core *self) {
    /* the plain engine's log: a list of its tuples */
    PyObject *log = PyList_New(self->logged);
    if (!log) return NULL;
    for (Py_ssize_t i = 0; i < self->logged; i++) {
        PyObject *t = entry_tuple(self, &self->log[i]);
        if (!t) { Py_DECREF(log); return NULL; }
        PyList_SET_ITEM(log, i, t);
    }
    return log;
}

/* ---- the rules (engine.py's _start_round, _drop_out, _pass_turn, _end_round, apply_action) */

static int start_round(Core *self, int round) {
    int n = self->n;
    stale(self);
    PyObject *deck = PyTuple_GET_ITEM(self->decks, round - 1);
    int size = hand_size_by_round[round - 1];
    int f = face_up_by_count[n];
    for (int s = 0; s < n; s++) {
        int hand[MAX_CARDS], count = 0, vol = 0, seen[MAX_CARDS] = {0};
        for (int i = s * size; i < (s + 1) * size; i++) {
            long c = PyLong_AsLong(PyTuple_GET_ITEM(deck, i));
            seen[c] = 1;
            vol += card_value[c];
        }
        for (int c = 0; c < num_cards; c++)
            if (seen[c]) hand[count++] = c;
        hand[count++] = drop_out;
        PyObject *legal = ints(hand, count);
        if (!legal) return -1;
        Py_XSETREF(self->legal[s], legal);
        self->vol[s] = vol;
    }
    PyObject *face_up = PyTuple_GetSlice(deck, n * size, n * size + f);
    PyObject *undealt = PyTuple_GetSlice(deck, n * size + f, PyTuple_GET_SIZE(deck));
    if (!face_up || !undealt) { Py_XDECREF(face_up); Py_XDECREF(undealt); return -1; }
    for (int c = 0; c <= black_index; c++) self->counts[c] = 0;
    for (int i = 0; i < f; i++) self->counts[card_colour[PyLong_AsLong(PyTuple_GET_ITEM(face_up, i))]]++;
    int start = (round - 1) % n;
    self->round = round;
    self->start = start;
    self->turn = 1;
    self->norder = n;
    for (int i = 0; i < n; i++) self->order[i] = (start + i) % n;
    self->pos = 0;
    self->to_act = start;
    self->size = f;
    Py_XSETREF(self->face_up, face_up);
    Py_XSETREF(self->undealt, undealt);
    self->first_chip = first_drop_out_chips;
    self->middle = chips_by_count[n] - first_drop_out_chips;
    for (int s = 0; s < n; s++) self->chips[s] = self->dropped[s] = 0;
    self->round_log = self->logged;
    int sizes[MAX_SEATS];
    for (int s = 0; s < n; s++) sizes[s] = size;
    PyObject *hand_sizes = ints(sizes, n);
    if (!hand_sizes) return -1;
    return log_append(self, Py_BuildValue("(OiiNOii)", s_round_start, round, start, hand_sizes,
                                          face_up, self->middle, self->first_chip));
}

static void pass_turn(Core *self, int pos) {
    if (pos == self->norder) {
        pos = 0;
        self->turn++;
    }
    self->pos = pos;
    self->to_act = self->order[pos];
}

static int end_round(Core *self) {
    int n = self->n, size = self->size, complete[MAX_SEATS], ncomplete = 0;
    stale(self);
    for (int s = 0; s < n; s++)
        if (self->vol[s] == size) complete[ncomplete++] = s;
    int share = ncomplete ? self->middle / ncomplete : 0;
    for (int i = 0; i < ncomplete; i++) self->chips[complete[i]] += share;
    self->middle -= share * ncomplete;
    int round = self->round, scores[MAX_SEATS];
    for (int s = 0; s < n; s++) {
        scores[s] = (self->vol[s] <= size ? self->vol[s] : 0) + self->chips[s] * chip_points_by_round[round - 1];
        self->totals[s] += scores[s];
    }
    PyObject *hands = PyTuple_New(n);
    if (!hands) return -1;
    for (int s = 0; s < n; s++) {
        PyObject *h = PyTuple_GetSlice(self->legal[s], 0, PyTuple_GET_SIZE(self->legal[s]) - 1);
        if (!h) { Py_DECREF(hands); return -1; }
        PyTuple_SET_ITEM(hands, s, h);
    }
    if (log_append(self, Py_BuildValue("(OiiNNNiNNN)", s_round_end, round, size, hands,
                                       ints(self->vol, n), ints(complete, ncomplete), share,
                                       ints(self->chips, n), ints(scores, n), ints(self->totals, n))) < 0)
        return -1;
    if (round == num_rounds) {
        self->over = 1;
        self->to_act = -1;
        return log_append(self, Py_BuildValue("(ON)", s_match_end, ints(self->totals, n)));
    }
    return start_round(self, round + 1);
}

static int drop(Core *self, int seat) {
    int turn = self->turn;
    Py_CLEAR(self->dropped_t);
    Py_CLEAR(self->chips_t);
    int early = turn < early_len ? early_chips_by_turn[turn] : 0;
    if (early > self->middle) early = self->middle;
    self->middle -= early;
    int first = self->first_chip;
    self->first_chip = 0;
    self->chips[seat] += early + first;
    self->dropped[seat] = turn;
    if (log_push(self, (Entry){ENTRY_DROP, seat, drop_out, turn, early, first}) < 0) return -1;
    for (int i = self->pos; i < self->norder - 1; i++) self->order[i] = self->order[i + 1];
    self->norder--;
    if (self->norder == 0) return end_round(self);
    pass_turn(self, self->pos);
    return 0;
}

static int play(Core *self, int seat, int card, PyObject *seat_obj, PyObject *action) {
    PyObject *legal = self->legal[seat];
    Py_ssize_t len = PyTuple_GET_SIZE(legal), at = -1;
    for (Py_ssize_t i = 0; i < len - 1; i++)
        if (PyLong_AsLong(PyTuple_GET_ITEM(legal, i)) == card) { at = i; break; }
    if (at < 0) return refuse((PyObject *)self, seat_obj, action);
    if (Py_REFCNT(legal) == 1) { /* only the state holds it: the card taken out in place */
        PyObject *card_obj = PyTuple_GET_ITEM(legal, at);
        for (Py_ssize_t i = at; i < len - 1; i++) PyTuple_SET_ITEM(legal, i, PyTuple_GET_ITEM(legal, i + 1));
        PyTuple_SET_ITEM(legal, len - 1, card_obj);
        if (_PyTuple_Resize(&self->legal[seat], len - 1) < 0) return -1; /* (drops card_obj) */
    } else {
        PyObject *rest = PyTuple_New(len - 1);
        if (!rest) return -1;
        for (Py_ssize_t i = 0, j = 0; i < len; i++)
            if (i != at) PyTuple_SET_ITEM(rest, j++, Py_NewRef(PyTuple_GET_ITEM(legal, i)));
        Py_SETREF(self->legal[seat], rest);
    }
    Py_CLEAR(self->hand_sizes);
    self->vol[seat] -= card_value[card];
    int colour = card_colour[card];
    int k = ++self->counts[colour];
    int chip = 0;
    if (k == third_card_position && colour != black_index) {
        chip = self->middle < third_card_chips ? self->middle : third_card_chips;
        self->middle -= chip;
        self->chips[seat] += chip;
        Py_CLEAR(self->chips_t);
    }
    if (log_push(self, (Entry){ENTRY_PLAY, seat, card, self->turn, chip, 0}) < 0) return -1;
    self->size++;
    pass_turn(self, self->pos + 1);
    return 0;
}

/* ---- the interface ------------------------------------------------------------------------ */

static PyObject *Core_seats_to_act(Core *self, PyObject *unused) {
    return Py_NewRef(self->over ? empty : seat_tuples[self->to_act]);
}

static PyObject *Core_legal_actions(Core *self, PyObject *seat) {
    int ok;
    long s = small_int(seat, &ok);
    if (ok && !self->over && s == self->to_act) return Py_NewRef(self->legal[s]);
    return Py_NewRef(empty);
}

static PyObject *Core_apply_action(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "apply_action(seat, action) takes two arguments");
        return NULL;
    }
    int seat_ok, action_ok;
    long seat = small_int(args[0], &seat_ok), action = small_int(args[1], &action_ok);
    int r;
    if (!seat_ok || !action_ok || self->over || seat != self->to_act)
        r = refuse((PyObject *)self, args[0], args[1]);
    else if (action == drop_out)
        r = drop(self, (int)seat);
    else if (action < 0 || action >= num_cards)
        r = refuse((PyObject *)self, args[0], args[1]);
    else
        r = play(self, (int)seat, (int)action, args[0], args[1]);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Core_is_over(Core *self, PyObject *unused) { return PyBool_FromLong(self->over); }

static PyObject *Core_scores(Core *self, PyObject *unused) { return ints(self->totals, self->n); }

static PyObject *table(Core *self, PyObject *spare) {
    /* engine.py's _table: the round's plays as Played, extending the last answer (in place
     * when only the state holds it: its own reference, and the recyclable spare's, dropped) */
    Py_ssize_t len = self->logged;
    if (self->table_start != self->round_log) {
        self->table_start = self->table_scanned = self->round_log;
        Py_SETREF(self->table, Py_NewRef(empty));
    }
    if (self->table_scanned < len) {
        Py_ssize_t have = PyTuple_GET_SIZE(self->table), more = 0;
        for (Py_ssize_t i = self->table_scanned; i < len; i++) more += self->log[i].kind == ENTRY_PLAY;
        if (more) {
            if (spare && SLOT(spare, OBS_TABLE) == self->table) /* (refilled below) */
                Py_SETREF(SLOT(spare, OBS_TABLE), Py_NewRef(Py_None));
            PyObject *t;
            if (Py_REFCNT(self->table) == 1 && have) {
                if (_PyTuple_Resize(&self->table, have + more) < 0) { /* (the table dropped) */
                    self->table = Py_NewRef(empty);
                    self->table_start = -1;
                    return NULL;
                }
                t = self->table;
                self->table = NULL;
            } else {
                t = PyTuple_New(have + more);
                if (!t) return NULL;
                for (Py_ssize_t i = 0; i < have; i++)
                    PyTuple_SET_ITEM(t, i, Py_NewRef(PyTuple_GET_ITEM(self->table, i)));
            }
            Py_ssize_t j = have;
            for (Py_ssize_t i = self->table_scanned; i < len; i++) {
                const Entry *e = &self->log[i];
                if (e->kind != ENTRY_PLAY) continue;
                PyObject *values[3] = {new_int(e->seat), new_int(e->action), new_int(e->turn)}, *p = NULL;
                if (values[0] && values[1] && values[2])
                    p = fill(played_type, played_offsets, values, 3); /* (its values stolen, even if it fails) */
                else
                    for (int v = 0; v < 3; v++) Py_XDECREF(values[v]);
                if (!p) {
                    Py_XSETREF(self->table, Py_NewRef(empty)); /* (built again from the round's start) */
                    self->table_start = -1;
                    Py_DECREF(t);
                    return NULL;
                }
                PyTuple_SET_ITEM(t, j++, p);
            }
            Py_XSETREF(self->table, t);
        }
        self->table_scanned = len;
    }
    return Py_NewRef(self->table);
}

static PyObject *Core_observation(Core *self, PyObject *seat_obj) {
    int ok;
    long seat = small_int(seat_obj, &ok);
    if (!ok || seat < -1 || seat >= self->n) {
        PyObject *r = PyObject_CallMethod((PyObject *)self, "_refuse_observer", "O", seat_obj);
        Py_XDECREF(r);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "_refuse_observer did not raise");
        return NULL;
    }
    int n = self->n, sizes[MAX_SEATS];
    for (int s = 0; s < n; s++) sizes[s] = (int)PyTuple_GET_SIZE(self->legal[s]) - 1;
    PyObject *spare = recyclable(self->spare);
    PyObject *hand = seat < 0 ? Py_NewRef(empty)
                     : refilled(spare ? SLOT(spare, OBS_HAND) : NULL, self->legal[seat], sizes[seat]);
    PyObject *values[NUM_OBS_FIELDS] = {
        Py_NewRef(seat_obj), new_int(n), new_int(self->round),
        new_int(self->turn), new_int(self->start),
        new_int(self->over ? -1 : self->to_act), hand,
        Py_XNewRef(self->hand_sizes ? self->hand_sizes : (self->hand_sizes = shared_sizes(sizes, n))),
        Py_NewRef(self->face_up), table(self, spare), cached(&self->dropped_t, self->dropped, n),
        cached(&self->chips_t, self->chips, n), new_int(self->middle),
        PyBool_FromLong(self->first_chip > 0), cached(&self->totals_t, self->totals, n),
    };
    for (int i = 0; i < NUM_OBS_FIELDS; i++)
        if (!values[i]) {
            for (int j = 0; j < NUM_OBS_FIELDS; j++) Py_XDECREF(values[j]);
            return NULL;
        }
    if (spare) return refill(spare, obs_offsets, values, NUM_OBS_FIELDS);
    PyObject *o = fill(obs_type, obs_offsets, values, NUM_OBS_FIELDS);
    Py_XSETREF(self->spare, Py_XNewRef(o));
    return o;
}

static PyObject *Core_public_observation(Core *self, PyObject *unused) {
    /* State.public_observation, without a Python frame: observation(-1) */
    return Core_observation(self, minus_one);
}

static PyObject *keyed_event(PyObject *kind, PyObject *seat, PyObject *e, PyObject **keys, int count) {
    /* an Event whose data maps keys to the entry's items from 1 on */
    PyObject *data = _PyDict_NewPresized(count);
    if (!data) return NULL;
    for (int i = 0; i < count; i++)
        if (PyDict_SetItem(data, keys[i], PyTuple_GET_ITEM(e, i + 1)) < 0) { Py_DECREF(data); return NULL; }
    PyObject *values[3] = {Py_NewRef(kind), Py_NewRef(seat), data};
    return fill(event_type, event_offsets, values, 3);
}

static PyObject *entry_event(const Entry *e) {
    /* engine.py's _event_from_entry for a play or a drop-out */
    PyObject *data = _PyDict_NewPresized(4), *kind, *turn = new_int(e->turn), *a = new_int(e->a);
    int r = !data || !turn || !a;
    if (r) {
    } else if (e->kind == ENTRY_DROP) { /* (seat, DROP_OUT, turn, early, first) */
        kind = k_drop_out;
        PyObject *b = new_int(e->b), *chips = new_int(e->a + e->b);
        r = !b || !chips || PyDict_SetItem(data, k_turn, turn) < 0 || PyDict_SetItem(data, k_early, a) < 0
            || PyDict_SetItem(data, k_first, b) < 0 || PyDict_SetItem(data, k_chips, chips) < 0;
        Py_XDECREF(b);
        Py_XDECREF(chips);
    } else { /* (seat, card, turn, third_card_chips) */
        kind = k_play;
        PyObject *card = new_int(e->action);
        r = !card || PyDict_SetItem(data, k_card, card) < 0 || PyDict_SetItem(data, k_turn, turn) < 0
            || PyDict_SetItem(data, k_third, a) < 0 || PyDict_SetItem(data, k_chips, a) < 0;
        Py_XDECREF(card);
    }
    Py_XDECREF(turn);
    Py_XDECREF(a);
    PyObject *seat = r ? NULL : new_int(e->seat);
    if (!seat) { Py_XDECREF(data); return NULL; }
    PyObject *values[3] = {Py_NewRef(kind), seat, data};
    return fill(event_type, event_offsets, values, 3);
}

static PyObject *event(PyObject *e) {
    /* engine.py's _event_from_entry: plays, drop-outs, round starts and ends here, the rest
     * (the match's end, a sampled state's start) by engine.py */
    Py_ssize_t len = PyTuple_GET_SIZE(e);
    PyObject *seat = PyTuple_GET_ITEM(e, 0);
    if (seat == s_round_start && len == 7)
        return keyed_event(k_round_start, PyTuple_GET_ITEM(e, 2), e, k_start_data, 6);
    if (seat == s_round_end && len == 10)
        return keyed_event(k_round_end, minus_one, e, k_end_data, 9);
    if (seat == s_match_end && len == 2 && PyTuple_CheckExact(PyTuple_GET_ITEM(e, 1))) {
        /* (MATCH_END, totals): the totals and their ranks (base.ranks_from_scores) */
        PyObject *totals = PyTuple_GET_ITEM(e, 1);
        Py_ssize_t n = PyTuple_GET_SIZE(totals);
        long t[MAX_SEATS];
        int ranks[MAX_SEATS];
        if (n > MAX_SEATS) return PyObject_CallOneArg(event_from_entry, e);
        for (Py_ssize_t i = 0; i < n; i++) {
            int ok;
            t[i] = small_int(PyTuple_GET_ITEM(totals, i), &ok);
            if (!ok) return PyObject_CallOneArg(event_from_entry, e);
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            ranks[i] = 0;
            for (Py_ssize_t j = 0; j < n; j++) ranks[i] += t[j] > t[i];
        }
        PyObject *data = _PyDict_NewPresized(2), *r = ints(ranks, (int)n);
        if (!data || !r || PyDict_SetItem(data, k_totals, totals) < 0 || PyDict_SetItem(data, k_ranks, r) < 0) {
            Py_XDECREF(data);
            Py_XDECREF(r);
            return NULL;
        }
        Py_DECREF(r);
        PyObject *values[3] = {Py_NewRef(k_match_end), Py_NewRef(minus_one), data};
        return fill(event_type, event_offsets, values, 3);
    }
    if (!PyLong_CheckExact(seat) || (len != 4 && len != 5))
        return PyObject_CallOneArg(event_from_entry, e);
    PyObject *data = _PyDict_NewPresized(4), *kind;
    if (!data) return NULL;
    int r;
    if (len == 5) { /* (seat, DROP_OUT, turn, early, first) */
        kind = k_drop_out;
        PyObject *chips = PyNumber_Add(PyTuple_GET_ITEM(e, 3), PyTuple_GET_ITEM(e, 4));
        r = !chips || PyDict_SetItem(data, k_turn, PyTuple_GET_ITEM(e, 2)) < 0
            || PyDict_SetItem(data, k_early, PyTuple_GET_ITEM(e, 3)) < 0
            || PyDict_SetItem(data, k_first, PyTuple_GET_ITEM(e, 4)) < 0
            || PyDict_SetItem(data, k_chips, chips) < 0;
        Py_XDECREF(chips);
    } else { /* (seat, card, turn, third_card_chips) */
        kind = k_play;
        r = PyDict_SetItem(data, k_card, PyTuple_GET_ITEM(e, 1)) < 0
            || PyDict_SetItem(data, k_turn, PyTuple_GET_ITEM(e, 2)) < 0
            || PyDict_SetItem(data, k_third, PyTuple_GET_ITEM(e, 3)) < 0
            || PyDict_SetItem(data, k_chips, PyTuple_GET_ITEM(e, 3)) < 0;
    }
    if (r) { Py_DECREF(data); return NULL; }
    PyObject *values[3] = {Py_NewRef(kind), Py_NewRef(seat), data};
    return fill(event_type, event_offsets, values, 3);
}

static PyObject *Core_events(Core *self, void *unused) {
    /* the public event log: the events cache extended to the log's end, as a tuple */
    for (Py_ssize_t i = PyList_GET_SIZE(self->events_cache); i < self->logged; i++) {
        const Entry *e = &self->log[i];
        PyObject *ev = e->kind == ENTRY_OTHER ? event(PyList_GET_ITEM(self->others, e->a)) : entry_event(e);
        if (!ev || PyList_Append(self->events_cache, ev) < 0) { Py_XDECREF(ev); return NULL; }
        Py_DECREF(ev);
    }
    return PyList_AsTuple(self->events_cache);
}

static PyObject *Core_clone(Core *self, PyObject *unused) {
    Core *new = (Core *)Py_TYPE(self)->tp_alloc(Py_TYPE(self), 0);
    if (!new) return NULL;
    PyObject *others = PyList_GetSlice(self->others, 0, PyList_GET_SIZE(self->others));
    PyObject *events = PyList_GetSlice(self->events_cache, 0, PyList_GET_SIZE(self->events_cache));
    Entry *log = PyMem_Malloc((self->log_room ? self->log_room : 1) * sizeof(Entry));
    if (!others || !events || !log) {
        Py_XDECREF(others);
        Py_XDECREF(events);
        PyMem_Free(log);
        Py_DECREF(new);
        return log ? NULL : PyErr_NoMemory();
    }
    if (self->logged) memcpy(log, self->log, self->logged * sizeof(Entry));
    /* every int field, then the references */
    size_t head = offsetof(Core, table_start);
    memcpy((char *)new + head, (char *)self + head, sizeof(Core) - head);
    new->game = Py_NewRef(self->game);
    new->decks = Py_NewRef(self->decks);
    for (int s = 0; s < MAX_SEATS; s++) new->legal[s] = Py_XNewRef(self->legal[s]);
    new->face_up = Py_NewRef(self->face_up);
    new->undealt = Py_NewRef(self->undealt);
    new->table = Py_NewRef(self->table);
    new->hand_sizes = Py_XNewRef(self->hand_sizes);
    new->dropped_t = Py_XNewRef(self->dropped_t);
    new->chips_t = Py_XNewRef(self->chips_t);
    new->totals_t = Py_XNewRef(self->totals_t);
    new->log = log;
    new->others = others;
    new->events_cache = events;
    return (PyObject *)new;
}

/* ---- to and from the plain engine's fields ------------------------------------------------ */

static PyObject *Core_export(Core *self, PyObject *unused) {
    /* the plain BalloonState's fields, by name (native.py sets them on a plain state) */
    int n = self->n;
    PyObject *legal = PyList_New(n);
    if (!legal) return NULL;
    for (int s = 0; s < n; s++) PyList_SET_ITEM(legal, s, Py_NewRef(self->legal[s]));
    /* (Py_BuildValue releases every N reference when it fails, and fails on a NULL one) */
    return Py_BuildValue(
        "{s:i,s:O,s:i,s:i,s:i,s:N,s:i,s:N,s:O,s:O,s:N,s:N,s:N,s:i,s:O,s:O,s:i,s:i,s:N,s:N,s:N,"
        "s:N,s:n}",
        "_n", n, "_decks", self->decks, "_round", self->round, "_start", self->start,
        "_turn", self->turn, "_order", int_list(self->order, self->norder), "_pos", self->pos,
        "_to_act", self->over ? Py_NewRef(nobody) : new_int(self->to_act),
        "_seats", self->over ? empty : seat_tuples[self->to_act],
        "_over", self->over ? Py_True : Py_False, "_legal", legal, "_vol", int_list(self->vol, n),
        "_counts", int_list(self->counts, black_index + 1), "_size", self->size,
        "_face_up", self->face_up, "_undealt", self->undealt, "_middle", self->middle,
        "_first_chip", self->first_chip, "_chips", int_list(self->chips, n),
        "_dropped", int_list(self->dropped, n), "_totals", int_list(self->totals, n),
        "_log", log_list(self),
        "_round_log", self->round_log);
}

static int load_log(Core *self, PyObject *log) {
    /* the log set from the plain engine's: its plays and drop-outs as records, the rest kept */
    PyObject *fast = PySequence_Fast(log, "_log");
    if (!fast) return -1;
    self->logged = 0;
    Py_XSETREF(self->others, PyList_New(0));
    int r = self->others ? 0 : -1;
    for (Py_ssize_t i = 0; r == 0 && i < PySequence_Fast_GET_SIZE(fast); i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(fast, i);
        Py_ssize_t len = PyTuple_CheckExact(t) ? PyTuple_GET_SIZE(t) : 0;
        long v[5] = {0};
        int ok = (len == 4 || len == 5) && PyLong_CheckExact(PyTuple_GET_ITEM(t, 0));
        for (Py_ssize_t j = 0; ok && j < len; j++) {
            v[j] = small_int(PyTuple_GET_ITEM(t, j), &ok);
            ok = ok && v[j] >= INT_MIN && v[j] <= INT_MAX;
        }
        if (ok && ((len == 4 && v[1] >= 0 && v[1] < num_cards) || (len == 5 && v[1] == drop_out)))
            r = log_push(self, (Entry){len == 4 ? ENTRY_PLAY : ENTRY_DROP, (int)v[0], (int)v[1], (int)v[2],
                                       (int)v[3], (int)v[4]});
        else if (len == 4 && PyLong_CheckExact(PyTuple_GET_ITEM(t, 0))) { /* (a play this core cannot hold) */
            PyErr_Format(PyExc_ValueError, "_log: entry %zd is no play of small ints: %R", i, t);
            r = -1;
        } else
            r = log_append(self, Py_NewRef(t));
    }
    Py_DECREF(fast);
    return r;
}

static PyObject *Core_load(Core *self, PyObject *plain) {
    /* this core set from a plain BalloonState's fields */
#define GET(name) PyObject *name = PyObject_GetAttrString(plain, "_" #name); if (!name) goto fail;
    PyObject *objs[32] = {0};
    int k = 0;
    GET(n) objs[k++] = n;
    GET(decks) objs[k++] = decks;
    GET(round) objs[k++] = round;
    GET(start) objs[k++] = start;
    GET(turn) objs[k++] = turn;
    GET(order) objs[k++] = order;
    GET(pos) objs[k++] = pos;
    GET(over) objs[k++] = over;
    GET(to_act) objs[k++] = to_act;
    GET(legal) objs[k++] = legal;
    GET(vol) objs[k++] = vol;
    GET(counts) objs[k++] = counts;
    GET(size) objs[k++] = size;
    GET(face_up) objs[k++] = face_up;
    GET(undealt) objs[k++] = undealt;
    GET(middle) objs[k++] = middle;
    GET(first_chip) objs[k++] = first_chip;
    GET(chips) objs[k++] = chips;
    GET(dropped) objs[k++] = dropped;
    GET(totals) objs[k++] = totals;
    GET(log) objs[k++] = log;
    GET(round_log) objs[k++] = round_log;
#undef GET
    self->n = (int)PyLong_AsLong(n);
    if (self->n < 2 || self->n > MAX_SEATS) { PyErr_SetString(PyExc_ValueError, "bad player count"); goto fail; }
    Py_XSETREF(self->decks, Py_NewRef(decks));
    self->round = (int)PyLong_AsLong(round);
    self->start = (int)PyLong_AsLong(start);
    self->turn = (int)PyLong_AsLong(turn);
    if ((self->norder = read_ints(order, self->order, MAX_SEATS, "order")) < 0) goto fail;
    self->pos = (int)PyLong_AsLong(pos);
    self->over = PyObject_IsTrue(over);
    self->to_act = self->over ? -1 : (int)PyLong_AsLong(to_act);
    PyObject *fast = PySequence_Fast(legal, "legal");
    if (!fast) goto fail;
    for (int s = 0; s < self->n; s++) {
        PyObject *t = PySequence_Tuple(PySequence_Fast_GET_ITEM(fast, s));
        if (!t) { Py_DECREF(fast); goto fail; }
        Py_XSETREF(self->legal[s], t);
    }
    Py_DECREF(fast);
    if (read_ints(vol, self->vol, MAX_SEATS, "vol") < 0 || read_ints(counts, self->counts, MAX_COLOURS, "counts") < 0
        || read_ints(chips, self->chips, MAX_SEATS, "chips") < 0 || read_ints(dropped, self->dropped, MAX_SEATS, "dropped") < 0
        || read_ints(totals, self->totals, MAX_SEATS, "totals") < 0)
        goto fail;
    self->size = (int)PyLong_AsLong(size);
    Py_XSETREF(self->face_up, PySequence_Tuple(face_up));
    Py_XSETREF(self->undealt, PySequence_Tuple(undealt));
    self->middle = (int)PyLong_AsLong(middle);
    self->first_chip = (int)PyLong_AsLong(first_chip);
    if (load_log(self, log) < 0) goto fail;
    self->round_log = PyLong_AsSsize_t(round_log);
    if (!self->face_up || !self->undealt || PyErr_Occurred()) goto fail;
    stale(self);
    Py_XSETREF(self->events_cache, PyList_New(0));
    Py_XSETREF(self->table, Py_NewRef(empty));
    self->table_start = -1;
    self->table_scanned = 0;
    for (int i = 0; i < k; i++) Py_DECREF(objs[i]);
    Py_RETURN_NONE;
fail:
    for (int i = 0; i < k; i++) Py_DECREF(objs[i]);
    return NULL;
}

static PyObject *Core_start(Core *self, PyObject *unused) {
    /* deal the first round from the decks (engine.py's BalloonState.__init__ with deal) */
    if (start_round(self, 1) < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- the type ------------------------------------------------------------------------------- */

static int core_init(Core *self, PyObject *game, int n, PyObject *decks) {
    /* a new core's fields (steals decks) */
    self->n = n;
    if (n < 2 || n > MAX_SEATS || PyTuple_GET_SIZE(decks) != num_rounds) {
        Py_DECREF(decks);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "the native core takes 2..5 players and every round's deck");
        return -1;
    }
    self->game = Py_NewRef(game);
    self->decks = decks;
    self->others = PyList_New(0);
    self->events_cache = PyList_New(0);
    self->table = Py_NewRef(empty);
    self->face_up = Py_NewRef(empty);
    self->undealt = Py_NewRef(empty);
    for (int s = 0; s < n; s++) self->legal[s] = Py_NewRef(empty);
    self->table_start = -1;
    return self->others && self->events_cache ? 0 : -1;
}

static PyObject *Core_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *game, *decks;
    if (!configured) { PyErr_SetString(PyExc_RuntimeError, "the native core is not configured"); return NULL; }
    if (!PyArg_ParseTuple(args, "OO!", &game, &PyTuple_Type, &decks)) return NULL;
    Core *self = (Core *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    PyObject *num = PyObject_GetAttr(game, str_num_players);
    if (!num) { Py_DECREF(self); return NULL; }
    long n = PyLong_AsLong(num);
    Py_DECREF(num);
    if (core_init(self, game, (int)n, Py_NewRef(decks)) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int Core_traverse(Core *self, visitproc visit, void *arg) {
    Py_VISIT(self->game);
    Py_VISIT(self->decks);
    Py_VISIT(self->others);
    Py_VISIT(self->events_cache);
    Py_VISIT(self->table);
    Py_VISIT(self->spare);
    return 0;
}

static int Core_clear(Core *self) {
    Py_CLEAR(self->game);
    Py_CLEAR(self->decks);
    for (int s = 0; s < MAX_SEATS; s++) Py_CLEAR(self->legal[s]);
    Py_CLEAR(self->face_up);
    Py_CLEAR(self->undealt);
    Py_CLEAR(self->others);
    PyMem_Free(self->log);
    self->log = NULL;
    self->logged = self->log_room = 0;
    Py_CLEAR(self->events_cache);
    Py_CLEAR(self->table);
    Py_CLEAR(self->spare);
    stale(self);
    return 0;
}

static void Core_dealloc(Core *self) {
    PyObject_GC_UnTrack(self);
    Core_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Core_hand(Core *self, PyObject *seat_obj);
static PyObject *Core_feature_tail(Core *self, PyObject *seat_obj);
static PyObject *Core_write_observation(Core *self, PyObject *const *args, Py_ssize_t nargs);

static PyMethodDef Core_methods[] = {
    {"seats_to_act", (PyCFunction)Core_seats_to_act, METH_NOARGS, "The seat to act, or none."},
    {"legal_actions", (PyCFunction)Core_legal_actions, METH_O, "The seat's legal actions now."},
    {"apply_action", (PyCFunction)(void (*)(void))Core_apply_action, METH_FASTCALL, "Apply one action."},
    {"is_over", (PyCFunction)Core_is_over, METH_NOARGS, "Whether the match is over."},
    {"scores", (PyCFunction)Core_scores, METH_NOARGS, "The totals so far."},
    {"observation", (PyCFunction)Core_observation, METH_O, "What the seat may see."},
    {"public_observation", (PyCFunction)Core_public_observation, METH_NOARGS, "What a spectator may see."},
    {"clone", (PyCFunction)Core_clone, METH_NOARGS, "An independent copy."},
    {"_export", (PyCFunction)Core_export, METH_NOARGS, "The plain engine's fields."},
    {"_load", (PyCFunction)Core_load, METH_O, "Set from a plain state's fields."},
    {"_start", (PyCFunction)Core_start, METH_NOARGS, "Deal the first round."},
    {"_hand", (PyCFunction)Core_hand, METH_O, "A seat's true hand."},
    {"_feature_tail", (PyCFunction)Core_feature_tail, METH_O, "feature_tail for a checked seat."},
    {"_write_observation", (PyCFunction)(void (*)(void))Core_write_observation, METH_FASTCALL,
     "A seat's observation array written into a float32 buffer of zeros."},
    {NULL}};

static PyObject *Core_hand(Core *self, PyObject *seat_obj) {
    /* a seat checked by native.py's hand */
    long seat = PyLong_AsLong(seat_obj);
    if (seat == -1 && PyErr_Occurred()) return NULL;
    if (seat < 0 || seat >= self->n) { PyErr_SetString(PyExc_IndexError, "no such seat"); return NULL; }
    return PyTuple_GetSlice(self->legal[seat], 0, PyTuple_GET_SIZE(self->legal[seat]) - 1);
}

static int feature_tail(Core *self, long seat, double *v) {
    /* engine.py's _feature_tail into v (12 + 6n values); how many */
    int n = self->n, k = 0;
    for (int c = 0; c < 6; c++) v[k++] = self->counts[c] / 8.0;
    v[k++] = self->round / 5.0;
    v[k++] = self->turn / 12.0;
    v[k++] = self->size / 50.0;
    v[k++] = self->vol[seat] / 50.0;
    v[k++] = self->middle / 12.0;
    v[k++] = self->first_chip > 0 ? 1.0 : 0.0;
    for (int i = 0; i < n; i++) { /* seats rotated: the observer first */
        int s = (int)((seat + i) % n);
        v[k++] = (PyTuple_GET_SIZE(self->legal[s]) - 1) / 10.0;
        v[k++] = self->dropped[s] ? 1.0 : 0.0;
        v[k++] = self->chips[s] / 12.0;
        v[k++] = self->totals[s] / 100.0;
        v[k++] = !self->over && self->to_act == s ? 1.0 : 0.0;
        v[k++] = self->start == s ? 1.0 : 0.0;
    }
    return k;
}

static PyObject *Core_feature_tail(Core *self, PyObject *seat_obj) {
    /* engine.py's _feature_tail, for a seat checked by native.py's feature_tail */
    long seat = PyLong_AsLong(seat_obj);
    if (seat == -1 && PyErr_Occurred()) return NULL;
    if (seat < 0 || seat >= self->n) { PyErr_SetString(PyExc_IndexError, "no such seat"); return NULL; }
    double v[12 + 6 * MAX_SEATS];
    int k = feature_tail(self, seat, v);
    PyObject *out = PyList_New(k);
    if (!out) return NULL;
    for (int i = 0; i < k; i++) {
        PyObject *f = PyFloat_FromDouble(v[i]);
        if (!f) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, i, f);
    }
    return out;
}

static PyObject *Core_write_observation(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    /* _write_observation(values, seat): the seat's observation array (engine.py's
     * feature_values: its ones, then its values from FEATURE_TAIL on) written into values, a
     * float32 buffer of zeros as long as it; False (nothing written) for anything else */
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_write_observation(values, seat)");
        return NULL;
    }
    int ok, n = self->n;
    long seat = small_int(args[1], &ok);
    if (!ok || seat < 0 || seat >= n) Py_RETURN_FALSE;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
    if (view.itemsize != 4 || !view.format || strcmp(view.format, "f") != 0 || view.ndim != 1
        || view.len / 4 != feature_size[n]) {
        PyBuffer_Release(&view);
        Py_RETURN_FALSE;
    }
    float *out = (float *)view.buf;
    PyObject *hand = self->legal[seat];
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(hand) - 1; i++) /* (the last is DROP_OUT) */
        out[PyLong_AsLong(PyTuple_GET_ITEM(hand, i))] = 1.0f;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->face_up); i++)
        out[face_up_feature[PyLong_AsLong(PyTuple_GET_ITEM(self->face_up, i))]] = 1.0f;
    for (Py_ssize_t i = self->round_log; i < self->logged; i++) /* the table's plays */
        if (self->log[i].kind == ENTRY_PLAY) out[table_feature[self->log[i].action]] = 1.0f;
    double v[12 + 6 * MAX_SEATS];
    int k = feature_tail(self, seat, v);
    for (int i = 0; i < k; i++) out[tail_at[n][i]] = (float)v[i];
    PyBuffer_Release(&view);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_TRUE;
}

static PyMemberDef Core_members[] = {
    {"game", T_OBJECT, offsetof(Core, game), READONLY, "The game."},
    {"num_players", T_INT, offsetof(Core, n), READONLY, "The number of seats."},
    {"round", T_INT, offsetof(Core, round), READONLY, "The round, 1-based."},
    {"turn", T_INT, offsetof(Core, turn), READONLY, "The turn (row) of the round, 1-based."},
    {"size", T_INT, offsetof(Core, size), READONLY, "Cards on the table, face-up ones included."},
    {"_events_cache", T_OBJECT, offsetof(Core, events_cache), READONLY, "Events built so far."},
    {NULL}};

static PyGetSetDef Core_getset[] = {
    {"events", (getter)Core_events, NULL, "The public event log so far.", NULL},
    {"_log", (getter)log_list, NULL, "The compact log, as the plain engine's (a new list).", NULL},
    {NULL}};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "arena.games.balloon._native_core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = Core_new,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
    .tp_members = Core_members,
    .tp_getset = Core_getset,
    .tp_doc = "Balloon Challenge's state, its hot path native (arena/games/balloon/native.py).",
};

/* ---- configure: the rules' constants and classes from engine.py ----------------------------- */

static PyObject *configure(PyObject *module, PyObject *engine) {
    int dealt;
    if (get_int(engine, "NUM_CARDS", &num_cards) < 0 || get_int(engine, "DROP_OUT", &drop_out) < 0
        || get_int(engine, "NUM_ROUNDS", &num_rounds) < 0 || get_int(engine, "BLACK_INDEX", &black_index) < 0
        || get_int(engine, "FIRST_DROP_OUT_CHIPS", &first_drop_out_chips) < 0
        || get_int(engine, "THIRD_CARD_POSITION", &third_card_position) < 0
        || get_int(engine, "THIRD_CARD_CHIPS", &third_card_chips) < 0)
        return NULL;
    if (num_cards > MAX_CARDS || num_rounds > MAX_ROUNDS || black_index + 1 > MAX_COLOURS || black_index < 5) {
        PyErr_SetString(PyExc_ValueError, "the deck or the rounds outgrow the native core");
        return NULL;
    }
    if (get_ints(engine, "CARD_VALUE", card_value, MAX_CARDS) < 0
        || get_ints(engine, "CARD_COLOUR", card_colour, MAX_CARDS) < 0
        || get_ints(engine, "HAND_SIZE_BY_ROUND", hand_size_by_round, MAX_ROUNDS) < 0
        || get_ints(engine, "CHIP_POINTS_BY_ROUND", chip_points_by_round, MAX_ROUNDS) < 0
        || (early_len = get_ints(engine, "EARLY_CHIPS_BY_TURN", early_chips_by_turn, MAX_TURNS)) < 0)
        return NULL;
    for (int n = 2; n <= MAX_SEATS; n++) {
        PyObject *r = PyObject_CallMethod(engine, "face_up_count", "i", n);
        PyObject *chips = PyObject_GetAttrString(engine, "CHIPS_BY_PLAYER_COUNT");
        PyObject *c = chips ? PyObject_GetItem(chips, new_int(n)) : NULL;
        Py_XDECREF(chips);
        if (!r || !c) { Py_XDECREF(r); Py_XDECREF(c); return NULL; }
        face_up_by_count[n] = (int)PyLong_AsLong(r);
        chips_by_count[n] = (int)PyLong_AsLong(c);
        Py_DECREF(r);
        Py_DECREF(c);
        PyObject *d = PyObject_CallMethod(engine, "cards_dealt", "ii", n, num_rounds);
        if (!d) return NULL;
        dealt = (int)PyLong_AsLong(d);
        Py_DECREF(d);
        if (dealt > num_cards) { PyErr_SetString(PyExc_ValueError, "deal outgrows the deck"); return NULL; }
    }
    if (get_ints(engine, "_FACE_UP_FEATURE", face_up_feature, MAX_CARDS) != num_cards
        || get_ints(engine, "_TABLE_FEATURE", table_feature, MAX_CARDS) != num_cards)
        return PyErr_Occurred() ? NULL : (PyErr_SetString(PyExc_ValueError, "a feature map is not one per card"), NULL);
    {
        PyObject *tails = PyObject_GetAttrString(engine, "_FEATURE_TAIL");
        if (!tails) return NULL;
        for (int n = 2; n <= MAX_SEATS; n++) {
            PyObject *key = new_int(n), *at = key ? PyObject_GetItem(tails, key) : NULL;
            Py_XDECREF(key);
            int k = at ? read_ints(at, tail_at[n], 12 + 6 * MAX_SEATS, "_FEATURE_TAIL") : -1;
            Py_XDECREF(at);
            if (k != 12 + 6 * n) {
                Py_DECREF(tails);
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "_FEATURE_TAIL is not 12 + 6n long");
                return NULL;
            }
            int top = tail_at[n][k - 1];
            for (int c = 0; c < num_cards; c++) {
                if (face_up_feature[c] > top) top = face_up_feature[c];
                if (table_feature[c] > top) top = table_feature[c];
            }
            feature_size[n] = top + 1;
        }
        Py_DECREF(tails);
    }
    s_round_start = PyObject_GetAttrString(engine, "_ROUND_START");
    s_round_end = PyObject_GetAttrString(engine, "_ROUND_END");
    s_match_end = PyObject_GetAttrString(engine, "_MATCH_END");
    nobody = PyObject_GetAttrString(engine, "_NOBODY");
    obs_type = (PyTypeObject *)PyObject_GetAttrString(engine, "BalloonObservation");
    played_type = (PyTypeObject *)PyObject_GetAttrString(engine, "Played");
    if (!s_round_start || !s_round_end || !s_match_end || !nobody || !obs_type || !played_type) return NULL;
    event_type = (PyTypeObject *)PyObject_GetAttrString(engine, "Event");
    event_from_entry = PyObject_GetAttrString(engine, "_event_from_entry");
    if (!event_type || !event_from_entry) return NULL;
    if (slot_offsets(obs_type, obs_offsets, NUM_OBS_FIELDS) < 0 || slot_offsets(played_type, played_offsets, 3) < 0
        || slot_offsets(event_type, event_offsets, 3) < 0)
        return NULL;
    {
        static const int at[2] = {OBS_HAND, OBS_TABLE};
        static const char *const names[2] = {"hand", "table"};
        if ((recycling = recycling_allowed(obs_type, at, names, 2)) < 0) return NULL;
    }
    k_play = PyUnicode_InternFromString("play");
    k_drop_out = PyUnicode_InternFromString("drop_out");
    k_card = PyUnicode_InternFromString("card");
    k_turn = PyUnicode_InternFromString("turn");
    k_third = PyUnicode_InternFromString("third_card_chips");
    k_chips = PyUnicode_InternFromString("chips");
    k_early = PyUnicode_InternFromString("early_chips");
    k_first = PyUnicode_InternFromString("first_drop_out_chips");
    if (!k_play || !k_drop_out || !k_card || !k_turn || !k_third || !k_chips || !k_early || !k_first) return NULL;
    k_round_start = PyUnicode_InternFromString("round_start");
    k_round_end = PyUnicode_InternFromString("round_end");
    minus_one = new_int(-1);
    k_match_end = PyUnicode_InternFromString("match_end");
    k_totals = PyUnicode_InternFromString("totals");
    k_ranks = PyUnicode_InternFromString("ranks");
    if (!k_round_start || !k_round_end || !minus_one || !k_match_end || !k_totals || !k_ranks) return NULL;
    for (int i = 0; i < 6; i++)
        if (!(k_start_data[i] = PyUnicode_InternFromString(round_start_keys[i]))) return NULL;
    for (int i = 0; i < 9; i++)
        if (!(k_end_data[i] = PyUnicode_InternFromString(round_end_keys[i]))) return NULL;
    if (small_ints_init() < 0) return NULL;
    empty = PyTuple_New(0);
    str_num_players = PyUnicode_InternFromString("num_players");
    if (!empty || !str_num_players) return NULL;
    for (int s = 0; s < MAX_SEATS; s++) seat_tuples[s] = Py_BuildValue("(i)", s);
    configured = 1;
    Py_RETURN_NONE;
}

/* ---- the deal from a seed: random.Random(seed).random() in C --------------------------------
 * CPython's Mersenne Twister (Modules/_randommodule.c: init_genrand, init_by_array,
 * genrand_uint32, random_random), seeded as random.Random(seed) seeds an int (its absolute
 * value, in 32-bit words from the lowest), for seeds of magnitude below 2**63 (larger ones take
 * the Python path). match_decks below with a random.Random is the plain version;
 * tests/games/test_engine_builds.py holds the two equal. */

#define MT_N 624
#define MT_M 397

typedef struct {
    uint32_t mt[MT_N];
    int index;
} Twister;

static void mt_init_genrand(Twister *t, uint32_t s) {
    uint32_t *mt = t->mt;
    mt[0] = s;
    for (int i = 1; i < MT_N; i++) mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + (uint32_t)i;
    t->index = MT_N;
}

static Twister mt_start; /* mt_init_genrand(19650218), where every seeding starts (index 0: not yet) */

static void mt_init_by_array(Twister *t, const uint32_t *key, int key_length) {
    uint32_t *mt = t->mt;
    if (!mt_start.index) mt_init_genrand(&mt_start, 19650218U);
    memcpy(t, &mt_start, sizeof mt_start); /* mt_init_genrand(t, 19650218U) */
    /* (mt[i - 1] is carried in `last`, not read back from memory: each step waits on the one
     * before, and a store read straight back costs that chain several cycles a step) */
    int i = 1, j = 0;
    uint32_t last = mt[0];
    for (int k = MT_N > key_length ? MT_N : key_length; k; k--) {
        last = mt[i] = (mt[i] ^ ((last ^ (last >> 30)) * 1664525U)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) { mt[0] = last; i = 1; }
        if (j >= key_length) j = 0;
    }
    for (int k = MT_N - 1; k; k--) {
        last = mt[i] = (mt[i] ^ ((last ^ (last >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= MT_N) { mt[0] = last; i = 1; }
    }
    mt[0] = 0x80000000U;
}

static uint32_t mt_next(Twister *t) {
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t *mt = t->mt, y;
    if (t->index >= MT_N) {
        int kk;
        for (kk = 0; kk < MT_N - MT_M; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + MT_M] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < MT_N - 1; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (mt[MT_N - 1] & 0x80000000U) | (mt[0] & 0x7fffffffU);
        mt[MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 0x1U];
        t->index = 0;
    }
    y = mt[t->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

static double mt_random(Twister *t) {
    uint32_t a = mt_next(t) >> 5, b = mt_next(t) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

static int mt_seed(Twister *t, PyObject *seed) {
    /* seeded as random.Random(seed); 0 (no error set) for a seed of magnitude 2**63 or more */
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(seed, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow || v == LLONG_MIN) return 0;
    unsigned long long a = (unsigned long long)(v < 0 ? -v : v);
    uint32_t key[2] = {(uint32_t)a, (uint32_t)(a >> 32)};
    mt_init_by_array(t, key, key[1] ? 2 : 1);
    return 1;
}

static PyObject *seeded_decks(PyObject *seed, int n) {
    /* match_decks(random.Random(seed).random, n), the draws in C; None for a seed of 64 bits
     * or more */
    Twister t;
    int r = mt_seed(&t, seed);
    if (r <= 0) return r < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *decks = PyTuple_New(num_rounds);
    if (!decks) return NULL;
    for (int round = 0; round < num_rounds; round++) {
        int deck[MAX_CARDS], dealt = n * hand_size_by_round[round] + face_up_by_count[n];
        for (int c = 0; c < num_cards; c++) deck[c] = c;
        for (int i = 0; i < dealt; i++) {
            int j = i + (int)(mt_random(&t) * (double)(num_cards - i)); /* int(rnd() * (total - i)) */
            int x = deck[i];
            deck[i] = deck[j];
            deck[j] = x;
        }
        PyObject *d = ints(deck, num_cards);
        if (!d) { Py_DECREF(decks); return NULL; }
        PyTuple_SET_ITEM(decks, round, d);
    }
    return decks;
}

static PyObject *module_seeded_decks(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    long n;
    if (nargs != 2 || !PyLong_CheckExact(args[0]) || (n = PyLong_AsLong(args[1])) < 2 || n > MAX_SEATS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "seeded_decks(seed: int, num_players)");
        return NULL;
    }
    return seeded_decks(args[0], (int)n);
}

static PyObject *module_new_state(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    /* new_state(cls, game, seed): a started state of cls (a subclass of Core) dealt from an
     * int seed (new_match's deal), in one call; None for a seed of magnitude 2**63 or more */
    if (nargs != 3 || !PyType_Check(args[0]) || !PyType_IsSubtype((PyTypeObject *)args[0], &CoreType)
        || !PyLong_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "new_state(cls, game, seed: int)");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)args[0];
    PyObject *game = args[1];
    PyObject *num = PyObject_GetAttr(game, str_num_players);
    if (!num) return NULL;
    long n = PyLong_AsLong(num);
    Py_DECREF(num);
    if (n < 2 || n > MAX_SEATS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "the native core takes 2..5 players");
        return NULL;
    }
    PyObject *decks = seeded_decks(args[2], (int)n);
    if (!decks || decks == Py_None) return decks;
    Core *self = (Core *)cls->tp_alloc(cls, 0);
    if (!self) { Py_DECREF(decks); return NULL; }
    if (core_init(self, game, (int)n, decks) < 0 || start_round(self, 1) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *match_decks(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    /* engine.py's match_decks without overrides: each round's shuffled_deck, in round order,
     * from rnd (a random.Random's bound random method) */
    long n;
    if (nargs != 2 || (n = PyLong_AsLong(args[1])) < 2 || n > MAX_SEATS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "match_decks(rnd, num_players)");
        return NULL;
    }
    PyObject *decks = PyTuple_New(num_rounds);
    if (!decks) return NULL;
    for (int r = 0; r < num_rounds; r++) {
        int deck[MAX_CARDS], dealt = (int)n * hand_size_by_round[r] + face_up_by_count[n];
        for (int c = 0; c < num_cards; c++) deck[c] = c;
        for (int i = 0; i < dealt; i++) {
            PyObject *x = PyObject_CallNoArgs(args[0]);
            double v = x ? PyFloat_AsDouble(x) : -1.0;
            Py_XDECREF(x);
            if (v == -1.0 && PyErr_Occurred()) { Py_DECREF(decks); return NULL; }
            int j = i + (int)(v * (double)(num_cards - i)); /* int(rnd() * (total - i)) */
            int t = deck[i];
            deck[i] = deck[j];
            deck[j] = t;
        }
        PyObject *t = ints(deck, num_cards);
        if (!t) { Py_DECREF(decks); return NULL; }
        PyTuple_SET_ITEM(decks, r, t);
    }
    return decks;
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_O, "Read the rules' constants and classes from engine.py."},
    {"match_decks", (PyCFunction)(void (*)(void))match_decks, METH_FASTCALL, "Every round's deck."},
    {"seeded_decks", (PyCFunction)(void (*)(void))module_seeded_decks, METH_FASTCALL,
     "Every round's deck, dealt from an int seed as random.Random(seed) deals it."},
    {"new_state", (PyCFunction)(void (*)(void))module_new_state, METH_FASTCALL,
     "A started state of a Core subclass dealt from an int seed."},
    {NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_native_core", NULL, -1, module_methods};

PyMODINIT_FUNC PyInit__native_core(void) {
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Core", (PyObject *)&CoreType) < 0
        || PyModule_AddStringConstant(m, "SOURCE_DIGEST", SOURCE_DIGEST) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
