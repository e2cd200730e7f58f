/* Boom: Runaway's native core: the hot path of the rules (docs/rules/boom.md), written against
 * CPython's C API. Built by scripts/build_engines.py into _native_core; used through
 * arena/games/boom/native.py, which hands everything cold (events, feature values, refusals'
 * reasons, snapshots, sampled states, the draws of chance) to the fast Python engine
 * (arena/games/boom/__init__.py) on a twin state made from this core's fields.
 * tests/games/test_engine_builds.py holds it equal to that engine and to the plain one
 * (plain.py), which states the rules.
 *
 * Rule constants are not restated here: configure() reads them from the engine at import. A
 * hand is a bit mask of bomb card ids (sorted by nature); a seat's face-down choice is the
 * action tuple it played (NULL: still to choose); the log holds the fast engine's compact
 * records, a round's record without its words (None: native.py works them out when the log is
 * read). Why the C API and not a binding library: docs/architecture.md, "A native core".
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "../native_core.h"

#define MAX_SEATS 5
#define NCARDS 50 /* bomb cards 0..49; RUSE is 50 */
#define NCOLOURS 5
#define NVALUES 10
#define NGUARDS 8
#define NUM_OBS_FIELDS 19

/* ---- the rules' constants, from the engine (configure) ---------------------------------- */
static int configured = 0;
static int ruse_card, short_hand_plays_all, ruse_in_step[3], fewest_bonus, bonus_every_round;
static int game_end_hand_size, series_target, max_game_rounds;
static int values[NVALUES], guards[NGUARDS][NCOLOURS];
static int step_cards[MAX_SEATS + 1][2];
static unsigned char whole_hand[MAX_SEATS + 1][NCARDS + 1][2]; /* plays_whole_hand */
static PyObject *guard_tuples;                                  /* GUARDS */
static PyObject *paradise_cards;                                /* _PARADISE_CARDS, by code */
static PyObject *singles[NCARDS + 1], *pairs[NCARDS + 1][NCARDS + 1];
static PyObject *seat_all[MAX_SEATS + 1][1 << MAX_SEATS]; /* (n, mask) -> tuple of the seats */
static PyObject *flags_of[MAX_SEATS + 1][1 << MAX_SEATS];  /* (n, mask) -> tuple of bools */
static PyObject *empty, *no_cards[MAX_SEATS + 1], *zeros_t[MAX_SEATS + 1];
static PyObject *r_round, *r_ruse_return, *r_bonus, *r_game_end, *r_series_end;
static PyObject *end_names[3]; /* HAND_SIZE_END, STUCK_END, ROUND_LIMIT_END */
static PyTypeObject *obs_type, *event_type;
static Py_ssize_t obs_offsets[NUM_OBS_FIELDS], event_offsets[3];
static int deal_draw, guard_draw;
static PyObject *r_game_start, *colour_names;
/* the events' kinds and data keys */
static PyObject *k_game_start, *k_guard, *k_reveal, *k_take_back, *k_escape, *k_ruse_return, *k_bonus,
    *k_game_end, *k_series_end;
static PyObject *k_game, *k_hand_sizes, *k_disc_up, *k_disc_down, *k_removed, *k_ruse, *k_round, *k_guard_no,
    *k_limits, *k_guards_left, *k_reshuffled, *k_step, *k_cards, *k_colour, *k_face_up, *k_points,
    *k_cards_left, *k_scores, *k_series_totals, *k_end, *k_stalemate, *k_games, *k_totals;

typedef struct {
    PyObject_HEAD
    PyObject *game;
    PyObject *seed;
    PyObject *seed_text;  /* the seed in decimal, as the draws of chance hash it (bytes) */
    PyObject *deal_sizes, *all_ruse; /* the game's: the game_start record's */
    PyObject *events_cache;          /* Event objects of the log's records so far */
    PyObject *choice[MAX_SEATS]; /* NULL: to choose; a tuple: chosen (() plays nothing) */
    PyObject *legal[MAX_SEATS];  /* legal actions as last built (NULL: not yet) */
    PyObject *revealed;          /* the first escape's choices in step 2, else no_cards */
    PyObject *disc_up, *disc_down, *removed;
    PyObject *log;               /* list of the fast engine's records */
    PyObject *game_rounds;       /* this game's round records */
    PyObject *key;               /* feature_key's object: new at each step */
    /* an observation's parts as last built (NULL once stale): round view, then per action */
    PyObject *used_t, *paradise_t, *scores_t, *totals_t;
    PyObject *sizes_t; /* hand sizes: the same through a step (a choice moves cards, not counts) */
    PyObject *spare;   /* the last observation made (recycled once only this holds it) */
    /* ints from here on (clone copies them at once) */
    Py_ssize_t expanded; /* log records whose events are in events_cache */
    /* the points of the rounds whose events were built since the last game_start, and how many
     * rounds (a game_end's event takes its scores from them when they are its rounds) */
    int ev_gains[MAX_SEATS], ev_rounds;
    int n, advanced, ruse_v, series, over, deal_size, deck_len;
    int deck[NCARDS];
    int game_no, round, step, gpos, guard, reshuffled, shuffles, pending;
    int order[NGUARDS];
    uint64_t hand[MAX_SEATS], played[MAX_SEATS]; /* bomb cards held; played this round */
    int has_ruse[MAX_SEATS], ruse_played[MAX_SEATS], to_play[MAX_SEATS], chosen_bombs[MAX_SEATS];
    int scores[MAX_SEATS], score_base[MAX_SEATS], totals[MAX_SEATS];
    int npar[MAX_SEATS];
    unsigned char par[MAX_SEATS][NCARDS]; /* paradise codes card * 2 + face_up, in order */
} Core;

static PyTypeObject CoreType;


/* ---- helpers ------------------------------------------------------------------------------ */

static inline int popcount(uint64_t x) {
    /* bits set (inline: without -mpopcnt, __builtin_popcountll is a call into libgcc) */
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

static int read_mask(PyObject *seq, uint64_t *out) {
    int cards[NCARDS];
    int len = read_ints(seq, cards, NCARDS, "hand");
    if (len < 0) return -1;
    *out = 0;
    for (int i = 0; i < len; i++) {
        if (cards[i] < 0 || cards[i] >= NCARDS) { PyErr_SetString(PyExc_ValueError, "not a bomb card"); return -1; }
        *out |= (uint64_t)1 << cards[i];
    }
    return 0;
}


#define SLOT(o, i) (*(PyObject **)((char *)(o) + obs_offsets[i]))
#define OBS_HAND 10 /* BoomObservation's fields: hand */

static PyObject *hand_tuple(uint64_t mask);

static PyObject *hand_refilled(PyObject *old, uint64_t mask) {
    /* hand_tuple(mask): old refilled if only its holder holds it and it has as many items */
    int count = popcount(mask);
    if (!old || !PyTuple_CheckExact(old) || Py_REFCNT(old) != 1 || PyTuple_GET_SIZE(old) != count || count < 3)
        return hand_tuple(mask);
    for (int i = 0; mask; i++, mask &= mask - 1) {
        PyObject *was = PyTuple_GET_ITEM(old, i);
        PyTuple_SET_ITEM(old, i, Py_NewRef(PyTuple_GET_ITEM(singles[__builtin_ctzll(mask)], 0)));
        Py_DECREF(was);
    }
    return Py_NewRef(old);
}

static int log_append(PyObject *list, PyObject *entry) {
    if (!entry) return -1;
    int r = PyList_Append(list, entry);
    Py_DECREF(entry);
    return r;
}

static PyObject *hand_tuple(uint64_t mask) {
    /* the cards of a mask, sorted; one or two cards are the shared tuples (tuples are values:
     * an escape's cards, the last cards of a hand, need no tuple of their own) */
    uint64_t rest = mask & (mask - 1);
    if (mask && !(rest & (rest - 1)))
        return Py_NewRef(rest ? pairs[__builtin_ctzll(mask)][__builtin_ctzll(rest)] : singles[__builtin_ctzll(mask)]);
    PyObject *t = PyTuple_New(popcount(mask));
    if (!t) return NULL;
    int i = 0;
    while (mask) {
        int c = __builtin_ctzll(mask);
        mask &= mask - 1;
        PyTuple_SET_ITEM(t, i++, Py_NewRef(PyTuple_GET_ITEM(singles[c], 0)));
    }
    return t;
}

static inline int hand_len(Core *self, int s) { return popcount(self->hand[s]); }

static void stale_view(Core *self) {
    Py_CLEAR(self->sizes_t);
    Py_CLEAR(self->used_t);
    Py_CLEAR(self->paradise_t);
    Py_CLEAR(self->scores_t);
    Py_CLEAR(self->totals_t);
}

static uint64_t colour_mask(int colour) { return (uint64_t)0x3FF << (colour * NVALUES); }

static int colour_sum(uint64_t cards, int colour) {
    uint64_t m = (cards >> (colour * NVALUES)) & 0x3FF;
    int sum = 0;
    while (m) {
        sum += values[__builtin_ctzll(m)];
        m &= m - 1;
    }
    return sum;
}

/* plain.resolve_colour: the seats that take back (flags, in `taken`), and the highest sum
 * left (their seats escape face up); returns the total left */
static int resolve_colour(int n, const int *sums, int limit, int *taken, int *top_left, int *order) {
    int left[MAX_SEATS], total = 0, k = 0;
    for (int s = 0; s < n; s++) { left[s] = sums[s]; taken[s] = 0; total += sums[s]; }
    while (total > limit) {
        int top = 0;
        for (int s = 0; s < n; s++) if (left[s] > top) top = left[s];
        for (int s = 0; s < n; s++)
            if (left[s] == top) {
                taken[s] = 1;
                total -= top;
                left[s] = 0;
                if (order) order[k++] = s;
            }
    }
    if (order && k < n) order[k] = -1;
    int top = 0;
    for (int s = 0; s < n; s++) if (left[s] > top) top = left[s];
    *top_left = top;
    return total;
}


/* ---- chance: the fast engine's _draw_digits (BLAKE2b by event), in C ------------------------- */

static const uint64_t b2_iv[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
                                  0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
                                  0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
static const uint8_t b2_sigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

#define ROTR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))
#define B2G(r, i, a, b, c, d)                                                                        \
    a = a + b + m[b2_sigma[r][2 * i]], d = ROTR64(d ^ a, 32), c = c + d, b = ROTR64(b ^ c, 24),     \
    a = a + b + m[b2_sigma[r][2 * i + 1]], d = ROTR64(d ^ a, 16), c = c + d, b = ROTR64(b ^ c, 63)

static void b2_compress(uint64_t *h, const unsigned char *block, uint64_t t, int last) {
    uint64_t m[16], v[16];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(m, block, sizeof m);
#else
    for (int i = 0; i < 16; i++) {
        uint64_t x = 0;
        for (int j = 7; j >= 0; j--) x = x << 8 | block[8 * i + j];
        m[i] = x;
    }
#endif
    for (int i = 0; i < 8; i++) v[i] = h[i], v[i + 8] = b2_iv[i];
    v[12] ^= t;
    if (last) v[14] = ~v[14];
    for (int r = 0; r < 12; r++) {
        B2G(r, 0, v[0], v[4], v[8], v[12]);
        B2G(r, 1, v[1], v[5], v[9], v[13]);
        B2G(r, 2, v[2], v[6], v[10], v[14]);
        B2G(r, 3, v[3], v[7], v[11], v[15]);
        B2G(r, 4, v[0], v[5], v[10], v[15]);
        B2G(r, 5, v[1], v[6], v[11], v[12]);
        B2G(r, 6, v[2], v[7], v[8], v[13]);
        B2G(r, 7, v[3], v[4], v[9], v[14]);
    }
    for (int i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/* BLAKE2b-512 of `len` bytes (hashlib.blake2b(data).digest()) */
static void blake2b(unsigned char *out, const unsigned char *in, size_t len) {
    uint64_t h[8];
    for (int i = 0; i < 8; i++) h[i] = b2_iv[i];
    h[0] ^= 0x01010040;
    uint64_t t = 0;
    while (len > 128) {
        t += 128;
        b2_compress(h, in, t, 0);
        in += 128;
        len -= 128;
    }
    unsigned char last[128] = {0};
    memcpy(last, in, len);
    t += len;
    b2_compress(h, last, t, 1);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) out[8 * i + j] = (unsigned char)(h[i] >> (8 * j));
}

/* a digit uniform in [0, radices[i]) for each radix (at most 96 of them): the fast engine's
 * _draw_digits for the event (purpose, game_no, number) of the match whose seed is seed_text */
static int draw_digits(PyObject *seed_text, int purpose, int game_no, int number, const int *radices,
                       int count, int *out) {
    const char *seed = PyBytes_AS_STRING(seed_text);
    Py_ssize_t seed_len = PyBytes_GET_SIZE(seed_text);
    size_t cap = (size_t)seed_len + 64;
    unsigned char small[128], block[64 * 4];
    unsigned char *text = cap <= sizeof small ? small : PyMem_Malloc(cap);
    if (!text) { PyErr_NoMemory(); return -1; }
    memcpy(text, seed, seed_len);
    int head = seed_len + snprintf((char *)text + seed_len, 64, " %d %d %d ", purpose, game_no, number);
    int size = 2 * count, digests = (size + 63) / 64;
    if (digests < 1) digests = 1;
    if (digests > 4) { if (text != small) PyMem_Free(text); PyErr_SetString(PyExc_ValueError, "too many digits"); return -1; }
    for (long counter = 0;; counter += digests) {
        for (int i = 0; i < digests; i++) {
            int len = head + snprintf((char *)text + head, 24, "%ld", counter + i);
            blake2b(block + 64 * i, text, (size_t)len);
        }
        int ok = 1;
        for (int i = 0; i < count && ok; i++) {
            int v = block[2 * i] | block[2 * i + 1] << 8, r = radices[i];
            ok = v < r * (65536 / r);
            out[i] = v % r;
        }
        if (ok) break;
    }
    if (text != small) PyMem_Free(text);
    return 0;
}

static int pop_at(int *pool, int *len, int at) {
    int v = pool[at];
    memmove(pool + at, pool + at + 1, (size_t)(*len - at - 1) * sizeof(int));
    (*len)--;
    return v;
}

static PyObject *sorted_tuple(const int *cards, int count) {
    uint64_t m = 0;
    for (int i = 0; i < count; i++) m |= (uint64_t)1 << cards[i];
    PyObject *t = PyTuple_New(count);
    if (!t) return NULL;
    for (int i = 0; m; i++) {
        PyTuple_SET_ITEM(t, i, Py_NewRef(PyTuple_GET_ITEM(singles[__builtin_ctzll(m)], 0)));
        m &= m - 1;
    }
    return t;
}


/* ---- two-card legal actions: a sequence of the pairs of a pool, built when indexed ------------ */

/* The fast engine's LegalPairs, natively: every sorted pair of distinct cards from a sorted pool
 * (the seat's hand, and its ruse card when it may play it), in lexicographic order, the same
 * sequence as tuple(itertools.combinations(pool, 2)); each pair is a shared tuple. Equal to a
 * tuple or list of the same actions; `pool` is the pool (the environments' masks read it). */
typedef struct {
    PyObject_HEAD
    int len, count;
    unsigned char pool[NCARDS + 1];
} Pairs;

static PyTypeObject PairsType;

static PyObject *pairs_new(const int *pool, int len) {
    Pairs *p = PyObject_New(Pairs, &PairsType);
    if (!p) return NULL;
    p->len = len;
    p->count = len * (len - 1) / 2;
    for (int i = 0; i < len; i++) p->pool[i] = (unsigned char)pool[i];
    return (PyObject *)p;
}

static PyObject *pairs_at(Pairs *p, Py_ssize_t k) {
    for (int a = 0; a < p->len - 1; a++) {
        int run = p->len - 1 - a;
        if (k < run) return Py_NewRef(pairs[p->pool[a]][p->pool[a + 1 + k]]);
        k -= run;
    }
    PyErr_SetString(PyExc_IndexError, "tuple index out of range");
    return NULL;
}

static PyObject *pairs_tuple(Pairs *p) {
    PyObject *t = PyTuple_New(p->count);
    if (!t) return NULL;
    int j = 0;
    for (int a = 0; a < p->len; a++)
        for (int b = a + 1; b < p->len; b++) PyTuple_SET_ITEM(t, j++, Py_NewRef(pairs[p->pool[a]][p->pool[b]]));
    return t;
}

static Py_ssize_t Pairs_length(Pairs *p) { return p->count; }

static PyObject *Pairs_item(Pairs *p, Py_ssize_t k) {
    if (k < 0 || k >= p->count) {
        PyErr_SetString(PyExc_IndexError, "tuple index out of range");
        return NULL;
    }
    return pairs_at(p, k);
}

static PyObject *Pairs_subscript(Pairs *p, PyObject *key) {
    if (PyIndex_Check(key)) {
        Py_ssize_t k = PyNumber_AsSsize_t(key, PyExc_IndexError);
        if (k == -1 && PyErr_Occurred()) return NULL;
        if (k < 0) k += p->count;
        return Pairs_item(p, k);
    }
    PyObject *t = pairs_tuple(p); /* a slice, or anything a tuple refuses */
    if (!t) return NULL;
    PyObject *r = PyObject_GetItem(t, key);
    Py_DECREF(t);
    return r;
}

static int Pairs_contains(Pairs *p, PyObject *action) {
    if (PyTuple_CheckExact(action) && PyTuple_GET_SIZE(action) == 2) {
        int ok_a, ok_b;
        long a = small_int(PyTuple_GET_ITEM(action, 0), &ok_a), b = small_int(PyTuple_GET_ITEM(action, 1), &ok_b);
        if (ok_a && ok_b) {
            if (a >= b) return 0;
            int has_a = 0, has_b = 0;
            for (int i = 0; i < p->len; i++) has_a |= p->pool[i] == a, has_b |= p->pool[i] == b;
            return has_a && has_b;
        }
    }
    PyObject *t = pairs_tuple(p); /* anything unusual: what a tuple answers */
    if (!t) return -1;
    int r = PySequence_Contains(t, action);
    Py_DECREF(t);
    return r;
}

static PyObject *Pairs_iter(Pairs *p) {
    PyObject *t = pairs_tuple(p);
    if (!t) return NULL;
    PyObject *it = PyObject_GetIter(t);
    Py_DECREF(t);
    return it;
}

static PyObject *Pairs_richcompare(Pairs *p, PyObject *other, int op) {
    if ((op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    PyObject *mine = pairs_tuple(p), *theirs;
    if (!mine) return NULL;
    if (Py_TYPE(other) == &PairsType) theirs = pairs_tuple((Pairs *)other);
    else if (PyTuple_Check(other) || PyList_Check(other)) theirs = PySequence_Tuple(other);
    else { Py_DECREF(mine); Py_RETURN_NOTIMPLEMENTED; }
    if (!theirs) { Py_DECREF(mine); return NULL; }
    PyObject *r = PyObject_RichCompare(mine, theirs, op);
    Py_DECREF(mine);
    Py_DECREF(theirs);
    return r;
}

static Py_hash_t Pairs_hash(Pairs *p) {
    PyObject *t = pairs_tuple(p);
    if (!t) return -1;
    Py_hash_t h = PyObject_Hash(t);
    Py_DECREF(t);
    return h;
}

static PyObject *Pairs_repr(Pairs *p) {
    PyObject *t = pairs_tuple(p);
    if (!t) return NULL;
    PyObject *r = PyUnicode_FromFormat("LegalPairs(%R)", t);
    Py_DECREF(t);
    return r;
}

static PyObject *Pairs_pool(Pairs *p, void *unused) {
    PyObject *t = PyTuple_New(p->len);
    if (!t) return NULL;
    for (int i = 0; i < p->len; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(PyTuple_GET_ITEM(singles[p->pool[i]], 0)));
    return t;
}

static PyObject *Pairs_reduce(Pairs *p, PyObject *unused) {
    /* pickled as the tuple it equals */
    PyObject *t = pairs_tuple(p);
    if (!t) return NULL;
    return Py_BuildValue("(O(N))", (PyObject *)&PyTuple_Type, t);
}

static PySequenceMethods Pairs_as_sequence = {
    .sq_length = (lenfunc)Pairs_length,
    .sq_item = (ssizeargfunc)Pairs_item,
    .sq_contains = (objobjproc)Pairs_contains,
};

static PyMappingMethods Pairs_as_mapping = {
    .mp_length = (lenfunc)Pairs_length,
    .mp_subscript = (binaryfunc)Pairs_subscript,
};

static PyGetSetDef Pairs_getset[] = {
    {"pool", (getter)Pairs_pool, NULL, "The sorted card ids the pairs are drawn from.", NULL},
    {NULL}};

static PyMethodDef Pairs_methods[] = {
    {"__reduce__", (PyCFunction)Pairs_reduce, METH_NOARGS, "Pickled as a tuple."},
    {NULL}};

static PyTypeObject PairsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "arena.games.boom._native_core.LegalPairs",
    .tp_basicsize = sizeof(Pairs),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_SEQUENCE,
    .tp_dealloc = (destructor)PyObject_Del,
    .tp_as_sequence = &Pairs_as_sequence,
    .tp_as_mapping = &Pairs_as_mapping,
    .tp_richcompare = (richcmpfunc)Pairs_richcompare,
    .tp_hash = (hashfunc)Pairs_hash,
    .tp_repr = (reprfunc)Pairs_repr,
    .tp_iter = (getiterfunc)Pairs_iter,
    .tp_getset = Pairs_getset,
    .tp_methods = Pairs_methods,
    .tp_doc = "The legal two-card actions of a seat (the fast engine's LegalPairs), natively.",
};

/* ---- the rules (the fast engine's _next_round, _begin_step, _end_step, _resolve_round,
 * _end_game, _deal_game) ---------------------------------------------------------------------- */

static int begin_step(Core *self, int step);
static int next_round(Core *self);

static void clear_legal(Core *self) {
    for (int s = 0; s < MAX_SEATS; s++) Py_CLEAR(self->legal[s]);
}

static int deal_game(Core *self) {
    /* the fast engine's _deal_cards: one draw pops every card but seat 0's hand from the sorted
     * deck (what is left is that hand), then the guard order */
    int n = self->n, size = self->deal_size, len = self->deck_len, k = len - size;
    int radices[NCARDS + NGUARDS], digits[NCARDS + NGUARDS], count = 0;
    for (int r = len; r > size; r--) radices[count++] = r;
    for (int r = NGUARDS; r > 1; r--) radices[count++] = r;
    if (draw_digits(self->seed_text, deal_draw, self->game_no, 0, radices, count, digits) < 0) return -1;
    int pool[NCARDS], drawn[NCARDS], guards[NGUARDS], glen = NGUARDS;
    memcpy(pool, self->deck, sizeof(int) * len);
    for (int i = 0; i < k; i++) drawn[i] = pop_at(pool, &len, digits[i]);
    for (int g = 0; g < NGUARDS; g++) guards[g] = g;
    for (int i = 0; i < NGUARDS - 1; i++) self->order[i] = pop_at(guards, &glen, digits[k + i]);
    self->order[NGUARDS - 1] = guards[0];
    self->hand[0] = 0;
    for (int i = 0; i < len; i++) self->hand[0] |= (uint64_t)1 << pool[i];
    for (int s = 1; s < n; s++) {
        self->hand[s] = 0;
        for (int i = (s - 1) * size; i < s * size; i++) self->hand[s] |= (uint64_t)1 << drawn[i];
    }
    PyObject *rest = sorted_tuple(drawn + (n - 1) * size, k - (n - 1) * size);
    if (!rest) return -1;
    Py_XSETREF(self->disc_up, self->advanced ? Py_NewRef(rest) : Py_NewRef(empty));
    Py_XSETREF(self->disc_down, self->advanced ? Py_NewRef(empty) : Py_NewRef(rest));
    Py_DECREF(rest);
    if (log_append(self->log, Py_BuildValue("(OiOOnOO)", r_game_start, self->game_no, self->deal_sizes,
                                            self->disc_up, PyTuple_GET_SIZE(self->disc_down), self->removed,
                                            self->all_ruse)) < 0)
        return -1;
    for (int s = 0; s < n; s++) {
        self->has_ruse[s] = self->ruse_v;
        self->scores[s] = self->score_base[s] = 0;
        self->npar[s] = 0;
    }
    Py_XSETREF(self->game_rounds, PyList_New(0));
    if (!self->game_rounds) return -1;
    self->round = 0;
    self->shuffles = 1;
    self->gpos = -1;
    return next_round(self);
}

static int next_round(Core *self) {
    self->round++;
    int gpos = self->gpos + 1;
    self->reshuffled = 0;
    if (gpos >= NGUARDS) {
        int radices[NGUARDS - 1], digits[NGUARDS - 1], guards[NGUARDS], glen = NGUARDS;
        for (int i = 0; i < NGUARDS - 1; i++) radices[i] = NGUARDS - i;
        if (draw_digits(self->seed_text, guard_draw, self->game_no, self->shuffles, radices, NGUARDS - 1, digits) < 0)
            return -1;
        for (int g = 0; g < NGUARDS; g++) guards[g] = g;
        for (int i = 0; i < NGUARDS - 1; i++) self->order[i] = pop_at(guards, &glen, digits[i]);
        self->order[NGUARDS - 1] = guards[0];
        self->shuffles++;
        gpos = 0;
        self->reshuffled = 1;
    }
    self->gpos = gpos;
    self->guard = self->order[gpos];
    stale_view(self);
    Py_XSETREF(self->revealed, Py_NewRef(no_cards[self->n]));
    for (int s = 0; s < self->n; s++) self->played[s] = 0, self->ruse_played[s] = 0;
    return begin_step(self, 1);
}

static int end_game(Core *self, int end) {
    int n = self->n;
    stale_view(self);
    PyObject *rounds = PyList_AsTuple(self->game_rounds);
    if (!rounds) return -1;
    if (log_append(self->log, Py_BuildValue("(OiONNN)", r_game_end, self->game_no, end_names[end],
                                            ints(self->totals, n), ints(self->score_base, n), rounds)) < 0)
        return -1;
    if (self->series) {
        int totals[MAX_SEATS], top = 0;
        for (int s = 0; s < n; s++) {
            totals[s] = self->totals[s] + self->scores[s];
            if (s == 0 || totals[s] > top) top = totals[s];
        }
        if (top < series_target) {
            for (int s = 0; s < n; s++) self->totals[s] = totals[s];
            self->game_no++;
            return deal_game(self);
        }
        if (log_append(self->log, Py_BuildValue("(OiN)", r_series_end, self->game_no, ints(totals, n))) < 0)
            return -1;
    }
    self->over = 1;
    self->step = 0;
    self->pending = 0;
    clear_legal(self);
    PyObject *key = PyList_New(0); /* feature_key changes at the end too */
    if (!key) return -1;
    Py_XSETREF(self->key, key);
    for (int s = 0; s < n; s++) {
        self->to_play[s] = 0;
        self->chosen_bombs[s] = 0;
        Py_XSETREF(self->choice[s], Py_NewRef(empty));
    }
    Py_XSETREF(self->revealed, Py_NewRef(no_cards[n]));
    return 0;
}

static int stuck(Core *self) {
    /* plain.provably_stuck on the hands as they are (ruse cards returned) */
    int n = self->n;
    for (int s = 0; s < n; s++)
        if (!whole_hand[n][hand_len(self, s)][self->has_ruse[s] ? 1 : 0]) return 0;
    for (int g = 0; g < NGUARDS; g++)
        for (int c = 0; c < NCOLOURS; c++) {
            int sums[MAX_SEATS], taken[MAX_SEATS], top;
            for (int s = 0; s < n; s++) sums[s] = colour_sum(self->hand[s], c);
            if (resolve_colour(n, sums, guards[g][c], taken, &top, NULL) > 0) return 0;
        }
    return 1;
}

static int resolve_round(Core *self, PyObject *second) {
    int n = self->n, guard = self->guard;
    for (int c = 0; c < NCOLOURS; c++) {
        int sums[MAX_SEATS], taken[MAX_SEATS], top, any = 0;
        for (int s = 0; s < n; s++) any |= (sums[s] = colour_sum(self->played[s], c));
        if (!any) continue;
        resolve_colour(n, sums, guards[guard][c], taken, &top, NULL);
        uint64_t cm = colour_mask(c);
        for (int s = 0; s < n; s++) {
            uint64_t cards = self->played[s] & cm;
            if (!cards) continue;
            if (taken[s]) {
                self->hand[s] |= cards;
                continue;
            }
            int face_up = sums[s] == top;
            self->scores[s] += popcount(cards) + (face_up ? sums[s] : 0);
            while (cards) {
                self->par[s][self->npar[s]++] = (unsigned char)(__builtin_ctzll(cards) * 2 + face_up);
                cards &= cards - 1;
            }
        }
    }
    for (int s = 0; s < n; s++)
        if (self->ruse_played[s]) self->has_ruse[s] = 1;
    int fewest = NCARDS + 1, end = -1;
    for (int s = 0; s < n; s++)
        if (hand_len(self, s) < fewest) fewest = hand_len(self, s);
    if (fewest <= game_end_hand_size) end = 0;
    else if (stuck(self)) end = 1;
    else if (self->round >= max_game_rounds) end = 2;
    int bonus[MAX_SEATS], nbonus = 0;
    if (self->advanced && (end >= 0 || bonus_every_round))
        for (int s = 0; s < n; s++)
            if (hand_len(self, s) == fewest) {
                bonus[nbonus++] = s;
                self->scores[s] += fewest_bonus;
            }
    /* (_ROUND, guard, words (None: native.py's _full), bonus, outcome cache, game, round, guards
     * left, reshuffled, first reveal, second), built item by item (the hot path: no format) */
    PyObject *items[11] = {
        Py_NewRef(r_round), new_int(guard), Py_NewRef(Py_None),
        nbonus ? ints(bonus, nbonus) : Py_NewRef(empty), PyList_New(0), new_int(self->game_no),
        new_int(self->round), new_int(NGUARDS - 1 - self->gpos),
        PyBool_FromLong(self->reshuffled), Py_NewRef(self->revealed), Py_NewRef(second)};
    PyObject *record = PyTuple_New(11);
    for (int i = 0; i < 11; i++)
        if (!items[i] && record) Py_CLEAR(record);
    if (!record) {
        for (int i = 0; i < 11; i++) Py_XDECREF(items[i]);
        return -1;
    }
    for (int i = 0; i < 11; i++) PyTuple_SET_ITEM(record, i, items[i]);
    if (PyList_Append(self->log, record) < 0 || PyList_Append(self->game_rounds, record) < 0) {
        Py_DECREF(record);
        return -1;
    }
    Py_DECREF(record);
    for (int s = 0; s < n; s++)
        if (self->ruse_played[s] && log_append(self->log, Py_BuildValue("(Oi)", r_ruse_return, s)) < 0)
            return -1;
    for (int i = 0; i < nbonus; i++)
        if (log_append(self->log, Py_BuildValue("(Oiii)", r_bonus, bonus[i], fewest_bonus, fewest)) < 0)
            return -1;
    stale_view(self);
    if (end >= 0) return end_game(self, end);
    return next_round(self);
}

static int end_step(Core *self) {
    int n = self->n;
    PyObject *played = PyTuple_New(n);
    if (!played) return -1;
    for (int s = 0; s < n; s++) PyTuple_SET_ITEM(played, s, Py_NewRef(self->choice[s]));
    int r;
    if (self->step == 1) {
        Py_XSETREF(self->revealed, played);
        r = begin_step(self, 2);
    } else {
        r = resolve_round(self, played);
        Py_DECREF(played);
    }
    return r;
}

static int begin_step(Core *self, int step) {
    int n = self->n, asked = step_cards[n][step - 1], ruse_ok = self->ruse_v && ruse_in_step[step];
    self->step = step;
    self->pending = 0;
    clear_legal(self);
    Py_CLEAR(self->sizes_t);
    PyObject *key = PyList_New(0);
    if (!key) return -1;
    Py_XSETREF(self->key, key);
    for (int s = 0; s < n; s++) {
        int have = hand_len(self, s) + (ruse_ok && self->has_ruse[s]);
        int k = have >= asked ? asked : (short_hand_plays_all ? have : 0);
        self->to_play[s] = k;
        self->chosen_bombs[s] = 0;
        Py_CLEAR(self->choice[s]);
        if (k) self->pending++;
        else self->choice[s] = Py_NewRef(empty);
    }
    if (!self->pending) return end_step(self);
    return 0;
}


/* ---- events (the fast engine's _to_event and _round_outcome), built when read ----------------- */

static int is_kind(PyObject *kind, PyObject *name) {
    return kind == name || (PyUnicode_Check(kind) && PyUnicode_Compare(kind, name) == 0);
}

static int add_event(PyObject *out, PyObject *kind, long seat, PyObject *data) {
    /* Event(kind, seat, data) appended to out; steals data */
    if (!data) return -1;
    PyObject *v[3] = {Py_NewRef(kind), new_int(seat), data};
    if (!v[1]) { Py_DECREF(v[0]); Py_DECREF(data); return -1; }
    return log_append(out, fill(event_type, event_offsets, v, 3));
}

static PyObject *data_of(int count, PyObject **keys, PyObject **vals) {
    /* a dict of keys to vals (stolen), sized for them at once */
    PyObject *d = _PyDict_NewPresized(count);
    int bad = !d;
    for (int i = 0; i < count; i++) {
        if (!bad && (!vals[i] || PyDict_SetItem(d, keys[i], vals[i]) < 0)) bad = 1;
        Py_XDECREF(vals[i]);
    }
    if (bad) { Py_XDECREF(d); return NULL; }
    return d;
}

static int played_masks(PyObject *cards, int n, uint64_t *masks) {
    /* each seat's bomb cards among a reveal's tuples (added to masks) */
    for (int s = 0; s < n && s < PyTuple_GET_SIZE(cards); s++) {
        PyObject *t = PyTuple_GET_ITEM(cards, s);
        if (t == Py_None) continue;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++) {
            long c = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
            if (c == -1 && PyErr_Occurred()) return -1;
            if (c >= 0 && c < NCARDS) masks[s] |= (uint64_t)1 << c;
        }
    }
    return 0;
}

static int guard_event(PyObject *out, PyObject *game_no, PyObject *round, long guard, PyObject *left,
                       PyObject *reshuffled) {
    PyObject *keys[6] = {k_game, k_round, k_guard_no, k_limits, k_guards_left, k_reshuffled};
    PyObject *vals[6] = {Py_NewRef(game_no), Py_NewRef(round), new_int(guard),
                         Py_NewRef(PyTuple_GET_ITEM(guard_tuples, guard)), Py_NewRef(left), Py_NewRef(reshuffled)};
    return add_event(out, k_guard, -1, data_of(6, keys, vals));
}

static int reveal_event(PyObject *out, int step, PyObject *cards) {
    PyObject *keys[2] = {k_step, k_cards};
    PyObject *vals[2] = {new_int(step), Py_NewRef(cards)};
    return add_event(out, k_reveal, -1, data_of(2, keys, vals));
}

/* a round record's take-backs and escapes (events into out when not NULL), each seat's points
 * from it into gains (bonus included) */
static int round_outcome(PyObject *rec, int n, PyObject *out, int *gains) {
    long guard = PyLong_AsLong(PyTuple_GET_ITEM(rec, 1));
    if (guard < 0 || guard >= NGUARDS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "not a guard");
        return -1;
    }
    uint64_t played[MAX_SEATS] = {0};
    if (played_masks(PyTuple_GET_ITEM(rec, 9), n, played) < 0 || played_masks(PyTuple_GET_ITEM(rec, 10), n, played) < 0)
        return -1;
    for (int c = 0; c < NCOLOURS; c++) {
        int sums[MAX_SEATS], taken[MAX_SEATS], order[MAX_SEATS], top, any = 0;
        for (int s = 0; s < n; s++) any |= (sums[s] = colour_sum(played[s], c));
        if (!any) continue;
        resolve_colour(n, sums, guards[guard][c], taken, &top, order);
        uint64_t cm = colour_mask(c);
        PyObject *colour = PyTuple_GET_ITEM(colour_names, c);
        for (int i = 0; out && i < n && order[i] >= 0; i++) {
            int s = order[i];
            PyObject *keys[2] = {k_colour, k_cards};
            PyObject *vals[2] = {Py_NewRef(colour), hand_tuple(played[s] & cm)};
            if (add_event(out, k_take_back, s, data_of(2, keys, vals)) < 0) return -1;
        }
        for (int s = 0; s < n; s++) {
            uint64_t cards = played[s] & cm;
            if (!cards || taken[s]) continue;
            int face_up = sums[s] == top, points = popcount(cards) + (face_up ? sums[s] : 0);
            gains[s] += points;
            if (!out) continue;
            PyObject *keys[4] = {k_colour, k_cards, k_face_up, k_points};
            PyObject *vals[4] = {Py_NewRef(colour), hand_tuple(cards), PyBool_FromLong(face_up), new_int(points)};
            if (add_event(out, k_escape, s, data_of(4, keys, vals)) < 0) return -1;
        }
    }
    PyObject *bonus = PyTuple_GET_ITEM(rec, 3);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(bonus); i++) {
        long s = PyLong_AsLong(PyTuple_GET_ITEM(bonus, i));
        if (s < 0 || s >= n) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "not a seat");
            return -1;
        }
        gains[s] += fewest_bonus;
    }
    return 0;
}

static PyObject *add_ints(PyObject *a, const int *b, int n) {
    /* the tuple a (of n ints) plus b, seat by seat */
    int t[MAX_SEATS];
    for (int s = 0; s < n; s++) {
        t[s] = (int)PyLong_AsLong(PyTuple_GET_ITEM(a, s)) + b[s];
        if (PyErr_Occurred()) return NULL;
    }
    return ints(t, n);
}

static int record_events(Core *self, PyObject *rec, PyObject *out) {
    int n = self->n;
    if (!PyTuple_Check(rec) || PyTuple_GET_SIZE(rec) < 2) {
        PyErr_SetString(PyExc_ValueError, "not a log record");
        return -1;
    }
    PyObject *kind = PyTuple_GET_ITEM(rec, 0);
#define AT(i) PyTuple_GET_ITEM(rec, i)
    if (is_kind(kind, r_round) && PyTuple_GET_SIZE(rec) == 11) {
        int gains[MAX_SEATS] = {0};
        long guard = PyLong_AsLong(AT(1));
        if (guard < 0 || guard >= NGUARDS) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "not a guard");
            return -1;
        }
        if (guard_event(out, AT(5), AT(6), guard, AT(7), AT(8)) < 0 || reveal_event(out, 1, AT(9)) < 0
            || reveal_event(out, 2, AT(10)) < 0 || round_outcome(rec, n, out, gains) < 0)
            return -1;
        for (int s = 0; s < n; s++) self->ev_gains[s] += gains[s];
        self->ev_rounds++;
        return 0;
    }
    if (is_kind(kind, r_ruse_return)) return add_event(out, k_ruse_return, PyLong_AsLong(AT(1)), PyDict_New());
    if (is_kind(kind, r_bonus) && PyTuple_GET_SIZE(rec) == 4) {
        PyObject *keys[2] = {k_points, k_cards_left};
        PyObject *vals[2] = {Py_NewRef(AT(2)), Py_NewRef(AT(3))};
        return add_event(out, k_bonus, PyLong_AsLong(AT(1)), data_of(2, keys, vals));
    }
    if (is_kind(kind, r_game_start) && PyTuple_GET_SIZE(rec) == 7) {
        for (int s = 0; s < n; s++) self->ev_gains[s] = 0;
        self->ev_rounds = 0;
        PyObject *keys[6] = {k_game, k_hand_sizes, k_disc_up, k_disc_down, k_removed, k_ruse};
        PyObject *vals[6] = {Py_NewRef(AT(1)), Py_NewRef(AT(2)), Py_NewRef(AT(3)), Py_NewRef(AT(4)),
                             Py_NewRef(AT(5)), Py_NewRef(AT(6))};
        return add_event(out, k_game_start, -1, data_of(6, keys, vals));
    }
    if (is_kind(kind, r_game_end) && PyTuple_GET_SIZE(rec) == 6) {
        int gains[MAX_SEATS] = {0};
        PyObject *rounds = AT(5);
        if (PyTuple_GET_SIZE(rounds) == self->ev_rounds) /* its rounds' events were just built */
            memcpy(gains, self->ev_gains, sizeof gains);
        else
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(rounds); i++)
                if (round_outcome(PyTuple_GET_ITEM(rounds, i), n, NULL, gains) < 0) return -1;
        PyObject *scores = add_ints(AT(4), gains, n);
        if (!scores) return -1;
        int sc[MAX_SEATS];
        for (int s = 0; s < n; s++) sc[s] = (int)PyLong_AsLong(PyTuple_GET_ITEM(scores, s));
        int stalemate = !is_kind(AT(2), end_names[0]);
        PyObject *keys[5] = {k_game, k_scores, k_series_totals, k_end, k_stalemate};
        PyObject *vals[5] = {Py_NewRef(AT(1)), scores, add_ints(AT(3), sc, n), Py_NewRef(AT(2)),
                             PyBool_FromLong(stalemate)};
        return add_event(out, k_game_end, -1, data_of(5, keys, vals));
    }
    if (is_kind(kind, r_series_end) && PyTuple_GET_SIZE(rec) == 3) {
        PyObject *keys[2] = {k_games, k_totals};
        PyObject *vals[2] = {Py_NewRef(AT(1)), Py_NewRef(AT(2))};
        return add_event(out, k_series_end, -1, data_of(2, keys, vals));
    }
#undef AT
    PyErr_Format(PyExc_ValueError, "unknown log record %R", rec);
    return -1;
}

static PyObject *Core_events(Core *self, void *unused) {
    /* the public event log: the events of the log's records (kept for the next call), then
     * the round in progress (its guard, and the first reveal in the second step) */
    Py_ssize_t len = PyList_GET_SIZE(self->log);
    for (Py_ssize_t i = self->expanded; i < len; i++) {
        Py_ssize_t have = PyList_GET_SIZE(self->events_cache);
        if (record_events(self, PyList_GET_ITEM(self->log, i), self->events_cache) < 0) {
            /* drop the record's events half built: the next call builds them again */
            PyObject *err, *val, *tb;
            PyErr_Fetch(&err, &val, &tb);
            PyList_SetSlice(self->events_cache, have, PyList_GET_SIZE(self->events_cache), NULL);
            PyErr_Restore(err, val, tb);
            return NULL;
        }
        self->expanded = i + 1;
    }
    if (self->over) return PyList_AsTuple(self->events_cache);
    PyObject *so_far = PyList_GetSlice(self->events_cache, 0, PyList_GET_SIZE(self->events_cache));
    if (!so_far) return NULL;
    PyObject *game_no = new_int(self->game_no), *round = new_int(self->round),
             *left = new_int(NGUARDS - 1 - self->gpos);
    int r = !game_no || !round || !left
            || guard_event(so_far, game_no, round, self->guard, left, self->reshuffled ? Py_True : Py_False) < 0
            || (self->step == 2 && reveal_event(so_far, 1, self->revealed) < 0);
    Py_XDECREF(game_no);
    Py_XDECREF(round);
    Py_XDECREF(left);
    if (r) { Py_DECREF(so_far); return NULL; }
    PyObject *t = PyList_AsTuple(so_far);
    Py_DECREF(so_far);
    return t;
}

/* ---- the interface ------------------------------------------------------------------------ */

static PyObject *Core_seats_to_act(Core *self, PyObject *unused) {
    int mask = 0;
    if (self->pending)
        for (int s = 0; s < self->n; s++)
            if (!self->choice[s]) mask |= 1 << s;
    return Py_NewRef(seat_all[self->n][mask]);
}

static PyObject *build_legal(Core *self, int s) {
    int pool[NCARDS + 1], len = 0;
    uint64_t m = self->hand[s];
    while (m) {
        pool[len++] = __builtin_ctzll(m);
        m &= m - 1;
    }
    if (self->ruse_v && ruse_in_step[self->step] && self->has_ruse[s]) pool[len++] = ruse_card;
    int k = self->to_play[s];
    PyObject *t;
    if (k == 1) {
        t = PyTuple_New(len);
        if (!t) return NULL;
        for (int i = 0; i < len; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(singles[pool[i]]));
    } else if (k == 2) {
        t = pairs_new(pool, len);
    } else {
        t = Py_NewRef(empty);
    }
    return t;
}

static PyObject *Core_legal_actions(Core *self, PyObject *seat) {
    int ok;
    long s = small_int(seat, &ok);
    if (!ok || s < 0 || s >= self->n || self->choice[s]) return Py_NewRef(empty);
    if (!self->legal[s] && !(self->legal[s] = build_legal(self, (int)s))) return NULL;
    return Py_NewRef(self->legal[s]);
}

static PyObject *Core_apply_action(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "apply_action(seat, action) takes two arguments");
        return NULL;
    }
    PyObject *action = args[1];
    int ok;
    long seat = small_int(args[0], &ok);
    if (!ok || seat < 0 || seat >= self->n || self->choice[seat] || !PyTuple_CheckExact(action)
        || PyTuple_GET_SIZE(action) != self->to_play[seat])
        return refuse((PyObject *)self, args[0], action), NULL;
    int k = (int)PyTuple_GET_SIZE(action), last = -1, ruse = 0, bombs = 0;
    uint64_t cards = 0, hand = self->hand[seat];
    for (int i = 0; i < k; i++) {
        long c = small_int(PyTuple_GET_ITEM(action, i), &ok);
        if (!ok || c <= last) return refuse((PyObject *)self, args[0], action), NULL;
        last = (int)c;
        if (c == ruse_card) {
            if (!(self->ruse_v && ruse_in_step[self->step] && self->has_ruse[seat]))
                return refuse((PyObject *)self, args[0], action), NULL;
            ruse = 1;
        } else if (c < 0 || c >= NCARDS || !(hand >> c & 1)) {
            return refuse((PyObject *)self, args[0], action), NULL;
        } else {
            cards |= (uint64_t)1 << c;
            bombs++;
        }
    }
    self->hand[seat] = hand & ~cards;
    self->played[seat] |= cards;
    if (ruse) {
        self->has_ruse[seat] = 0;
        self->ruse_played[seat] = 1;
    }
    self->chosen_bombs[seat] = bombs;
    self->choice[seat] = Py_NewRef(action);
    Py_CLEAR(self->legal[seat]);
    if (--self->pending == 0 && end_step(self) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Core_is_over(Core *self, PyObject *unused) { return PyBool_FromLong(self->over); }

static PyObject *Core_scores(Core *self, PyObject *unused) {
    int t[MAX_SEATS];
    for (int s = 0; s < self->n; s++) t[s] = self->totals[s] + self->scores[s];
    return ints(t, self->n);
}

static PyObject *paradise_view(Core *self) {
    PyObject *t = PyTuple_New(self->n);
    if (!t) return NULL;
    for (int s = 0; s < self->n; s++) {
        PyObject *p = PyTuple_New(self->npar[s]);
        if (!p) { Py_DECREF(t); return NULL; }
        for (int i = 0; i < self->npar[s]; i++)
            PyTuple_SET_ITEM(p, i, Py_NewRef(PyTuple_GET_ITEM(paradise_cards, self->par[s][i])));
        PyTuple_SET_ITEM(t, s, p);
    }
    return t;
}

static PyObject *totals_seen(Core *self) {
    int t[MAX_SEATS];
    for (int s = 0; s < self->n; s++) t[s] = self->totals[s] + (self->over ? self->scores[s] : 0);
    return ints(t, self->n);
}

static int round_view(Core *self) {
    if (!self->used_t && !(self->used_t = ints(self->order, self->gpos + 1))) return -1;
    if (!self->paradise_t && !(self->paradise_t = paradise_view(self))) return -1;
    if (!self->scores_t && !(self->scores_t = ints(self->scores, self->n))) return -1;
    if (!self->totals_t && !(self->totals_t = totals_seen(self))) return -1;
    return 0;
}

static PyObject *Core_observation(Core *self, PyObject *seat_obj) {
    int ok;
    long seat = small_int(seat_obj, &ok);
    int n = self->n;
    if (!ok || seat < -1 || seat >= n) {
        PyObject *r = PyObject_CallMethod((PyObject *)self, "_refuse_observer", "O", seat_obj);
        Py_XDECREF(r);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "_refuse_observer did not raise");
        return NULL;
    }
    if (round_view(self) < 0) return NULL;
    int sizes[MAX_SEATS], acted = 0;
    for (int s = 0; s < n; s++) {
        sizes[s] = hand_len(self, s) + self->chosen_bombs[s];
        PyObject *c = self->choice[s];
        if (c && PyTuple_GET_SIZE(c) > 0) acted |= 1 << s;
    }
    if (!self->sizes_t && !(self->sizes_t = ints(sizes, n))) return NULL;
    int to_play = seat >= 0 && !self->choice[seat] ? self->to_play[seat] : 0;
    PyObject *spare = recyclable(self->spare);
    PyObject *hand = seat < 0 ? Py_NewRef(empty) : hand_refilled(spare ? SLOT(spare, OBS_HAND) : NULL, self->hand[seat]);
    PyObject *v[NUM_OBS_FIELDS] = {
        Py_NewRef(seat_obj), new_int(n), new_int(self->game_no),
        new_int(self->round), new_int(self->over ? 0 : self->step),
        new_int(self->guard), Py_NewRef(PyTuple_GET_ITEM(guard_tuples, self->guard)),
        new_int(NGUARDS - (self->gpos + 1)), Py_NewRef(self->used_t), new_int(to_play),
        hand,
        PyBool_FromLong(seat >= 0 && self->has_ruse[seat]), Py_NewRef(self->sizes_t), Py_NewRef(flags_of[n][acted]),
        Py_NewRef(self->revealed), Py_NewRef(self->paradise_t), Py_NewRef(self->disc_up),
        Py_NewRef(self->scores_t), Py_NewRef(self->totals_t),
    };
    for (int i = 0; i < NUM_OBS_FIELDS; i++)
        if (!v[i]) {
            for (int j = 0; j < NUM_OBS_FIELDS; j++) Py_XDECREF(v[j]);
            return NULL;
        }
    if (spare) return refill(spare, obs_offsets, v, NUM_OBS_FIELDS);
    PyObject *o = fill(obs_type, obs_offsets, v, NUM_OBS_FIELDS);
    Py_XSETREF(self->spare, Py_XNewRef(o));
    return o;
}

/* ---- the environments' observation values (the fast engine's write_feature_values and
 * write_step_values, which stay as the plain version: native.py hands them what this does not
 * take; tests/envs/test_env_features.py and tests/games/test_engine_builds.py hold them equal) */

typedef struct {
    float *v;
    int own_at[MAX_SEATS], head, block_at[MAX_SEATS];
} Target;

static int read_target(Core *self, PyObject *const *args, Target *t, Py_buffer *view) {
    /* 1: the arguments (values, own_at, head, block_at) as write_feature_values takes them, values
     * a writable float32 buffer that holds every index written; 0 (no error set) for anything
     * else (native.py hands that to the fast engine, which writes a list or raises as it does) */
    if (PyObject_GetBuffer(args[0], view, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        return 0;
    }
    int ok = view->itemsize == 4 && view->format && strcmp(view->format, "f") == 0 && view->ndim == 1
             && PyList_CheckExact(args[1]) && PyList_GET_SIZE(args[1]) == self->n && PyLong_CheckExact(args[2])
             && PyList_CheckExact(args[3]) && PyList_GET_SIZE(args[3]) == self->n;
    Py_ssize_t len = view->len / 4;
    long lo = 0, hi = -1;
    if (ok) {
        int good;
        long head = small_int(args[2], &good);
        ok = good && head >= -(1L << 30) && head < (1L << 30);
        t->head = (int)head;
        lo = head + 52, hi = head + 128;
        for (int s = 0; ok && s < self->n; s++) {
            long own = small_int(PyList_GET_ITEM(args[1], s), &good), block;
            ok = good && own >= 0 && own < len && (block = small_int(PyList_GET_ITEM(args[3], s), &good), good)
                 && block >= 0 && block < len;
            if (!ok) break;
            t->own_at[s] = (int)own;
            t->block_at[s] = (int)block;
            if (own < lo) lo = own;
            if (block < lo) lo = block;
            if (own + 51 > hi) hi = own + 51;
            if (block + 104 > hi) hi = block + 104;
        }
    }
    if (!ok || lo < 0 || hi >= len) {
        PyBuffer_Release(view);
        return 0;
    }
    t->v = (float *)view->buf;
    return 1;
}

static void write_step(Core *self, const Target *t) {
    float *v = t->v;
    int head = t->head, step = self->over ? 0 : self->step;
    v[head + 52] = v[head + 53] = v[head + 54] = 0.0f;
    v[head + 52 + (step < 2 ? step : 2)] = 1.0f;
    for (int s = 0; s < self->n; s++) {
        int base = t->block_at[s], at = t->own_at[s];
        PyObject *cards = PyTuple_GET_ITEM(self->revealed, s), *played = self->choice[s];
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cards); i++)
            v[base + PyLong_AsLong(PyTuple_GET_ITEM(cards, i))] = 1.0f;
        int size = hand_len(self, s), chosen = played && PyTuple_GET_SIZE(played) > 0;
        if (chosen) /* face-down cards count until they are revealed */
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(played); i++)
                size += PyLong_AsLong(PyTuple_GET_ITEM(played, i)) != ruse_card;
        v[base + 101] = (float)(size / 16.0);
        v[base + 102] = chosen ? 1.0f : 0.0f;
        v[at + 51] = (float)((played ? 0 : self->to_play[s]) / 2.0);
    }
}

static PyObject *Core_write_values(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    /* _write_values(values, own_at, head, block_at, whole): write_feature_values (whole true)
     * or write_step_values natively; False when values is not a float32 buffer that holds them
     * (native.py then hands them to the fast engine) */
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "_write_values(values, own_at, head, block_at, whole)");
        return NULL;
    }
    Py_buffer view;
    Target t;
    if (!read_target(self, args, &t, &view)) Py_RETURN_FALSE;
    int whole = PyObject_IsTrue(args[4]);
    if (whole < 0) { PyBuffer_Release(&view); return NULL; }
    if (whole) {
        float *v = t.v;
        int head = t.head, n = self->n;
        /* guard card 55.., guards used 68.., cards discarded face up 79.. */
        v[head + 55 + self->guard] = 1.0f;
        for (int i = 0; i <= self->gpos; i++) v[head + 68 + self->order[i]] = 1.0f;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->disc_up); i++)
            v[head + 79 + PyLong_AsLong(PyTuple_GET_ITEM(self->disc_up, i))] = 1.0f;
        /* limits 63..67, guards left 76, round 77, game number 78 */
        for (int c = 0; c < NCOLOURS; c++) v[head + 63 + c] = (float)(guards[self->guard][c] / 16.0);
        v[head + 76] = (float)((NGUARDS - (self->gpos + 1)) / 8.0);
        v[head + 77] = (float)(self->round / 20.0);
        v[head + 78] = (float)(self->game_no / 10.0);
        for (int s = 0; s < n; s++) {
            int base = t.block_at[s], at = t.own_at[s];
            /* the block: paradise cards 51.. (1 face up, 0.5 face down: codes are card * 2 +
             * face up), score / 100 at 103, series total / 200 at 104 */
            for (int i = 0; i < self->npar[s]; i++) {
                int code = self->par[s][i];
                v[base + 51 + (code >> 1)] = code & 1 ? 1.0f : 0.5f;
            }
            v[base + 103] = (float)(self->scores[s] / 100.0);
            v[base + 104] = (float)((self->totals[s] + (self->over ? self->scores[s] : 0)) / 200.0);
            /* the seat's own part: its hand 0..49, its ruse card at 50 */
            for (uint64_t m = self->hand[s]; m; m &= m - 1) v[at + __builtin_ctzll(m)] = 1.0f;
            if (self->has_ruse[s]) v[at + 50] = 1.0f;
        }
    }
    write_step(self, &t);
    PyBuffer_Release(&view);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_TRUE;
}

static PyObject *minus_one;

static PyObject *Core_public_observation(Core *self, PyObject *unused) {
    /* State.public_observation, without a Python frame: observation(-1) */
    return Core_observation(self, minus_one);
}

static PyObject *Core_feature_key(Core *self, PyObject *unused) {
    return Py_BuildValue("(Oi)", self->key, self->pending);
}

static PyObject *Core_round_key(Core *self, PyObject *unused) {
    return Py_BuildValue("(ii)", self->game_no, self->round);
}

static PyObject *Core_hand(Core *self, PyObject *seat_obj) {
    /* a seat checked by native.py */
    long seat = PyLong_AsLong(seat_obj);
    if (seat == -1 && PyErr_Occurred()) return NULL;
    if (seat < 0 || seat >= self->n) { PyErr_SetString(PyExc_IndexError, "no such seat"); return NULL; }
    return hand_tuple(self->hand[seat]);
}

static PyObject *Core_clone(Core *self, PyObject *unused) {
    Core *new = (Core *)Py_TYPE(self)->tp_alloc(Py_TYPE(self), 0);
    if (!new) return NULL;
    size_t head = offsetof(Core, expanded);
    memcpy((char *)new + head, (char *)self + head, sizeof(Core) - head);
    new->log = PyList_GetSlice(self->log, 0, PyList_GET_SIZE(self->log));
    new->game_rounds = PyList_GetSlice(self->game_rounds, 0, PyList_GET_SIZE(self->game_rounds));
    if (!new->log || !new->game_rounds) { Py_DECREF(new); return NULL; }
    new->game = Py_NewRef(self->game);
    new->seed = Py_NewRef(self->seed);
    new->seed_text = Py_NewRef(self->seed_text);
    new->deal_sizes = Py_NewRef(self->deal_sizes);
    new->all_ruse = Py_NewRef(self->all_ruse);
    new->events_cache = PyList_GetSlice(self->events_cache, 0, PyList_GET_SIZE(self->events_cache));
    if (!new->events_cache) { Py_DECREF(new); return NULL; }
    for (int s = 0; s < MAX_SEATS; s++) {
        new->choice[s] = Py_XNewRef(self->choice[s]);
        new->legal[s] = Py_XNewRef(self->legal[s]);
    }
    new->revealed = Py_NewRef(self->revealed);
    new->disc_up = Py_NewRef(self->disc_up);
    new->disc_down = Py_NewRef(self->disc_down);
    new->removed = Py_NewRef(self->removed);
    new->key = Py_NewRef(self->key);
    new->sizes_t = Py_XNewRef(self->sizes_t);
    new->used_t = Py_XNewRef(self->used_t);
    new->paradise_t = Py_XNewRef(self->paradise_t);
    new->scores_t = Py_XNewRef(self->scores_t);
    new->totals_t = Py_XNewRef(self->totals_t);
    return (PyObject *)new;
}

/* ---- to and from the fast engine's fields --------------------------------------------------- */

static PyObject *Core_export(Core *self, PyObject *unused) {
    /* the fields native.py makes a twin state of, by name */
    int n = self->n;
    PyObject *hands = PyList_New(n), *choice = PyList_New(n), *paradise = PyTuple_New(n),
             *played = PyList_New(n);
    if (!hands || !choice || !paradise || !played) goto fail;
    for (int s = 0; s < n; s++) {
        PyObject *h = hand_tuple(self->hand[s]), *p = hand_tuple(self->played[s]);
        PyObject *l = h ? PySequence_List(h) : NULL;
        Py_XDECREF(h);
        if (!l || !p) { Py_XDECREF(l); Py_XDECREF(p); goto fail; }
        PyList_SET_ITEM(hands, s, l);
        PyList_SET_ITEM(played, s, p);
        PyList_SET_ITEM(choice, s, Py_NewRef(self->choice[s] ? self->choice[s] : Py_None));
        PyObject *codes = PyTuple_New(self->npar[s]);
        if (!codes) goto fail;
        for (int i = 0; i < self->npar[s]; i++) PyTuple_SET_ITEM(codes, i, new_int(self->par[s][i]));
        PyTuple_SET_ITEM(paradise, s, codes);
    }
    int ruse[MAX_SEATS];
    for (int s = 0; s < n; s++) ruse[s] = self->has_ruse[s];
    PyObject *has_ruse = PyList_New(n);
    if (!has_ruse) goto fail;
    for (int s = 0; s < n; s++) PyList_SET_ITEM(has_ruse, s, PyBool_FromLong(ruse[s]));
    int rp[MAX_SEATS];
    for (int s = 0; s < n; s++) rp[s] = self->ruse_played[s];
    return Py_BuildValue(
        "{s:O,s:i,s:N,s:N,s:N,s:N,s:N,s:N,s:i,s:i,s:i,s:N,s:i,s:i,s:O,s:O,s:N,s:N,s:O,s:O,s:N,s:O,s:N,"
        "s:N,s:N}",
        "_seed", self->seed, "_shuffles", self->shuffles, "_hands", hands, "_has_ruse", has_ruse,
        "_paradise", paradise, "_scores", ints(self->scores, n), "_score_base", ints(self->score_base, n),
        "_totals", int_list(self->totals, n), "_game_no", self->game_no, "_round", self->round,
        "_step", self->step, "_order", int_list(self->order, NGUARDS), "_gpos", self->gpos,
        "_guard", self->guard, "_reshuffled", self->reshuffled ? Py_True : Py_False,
        "_disc_up", self->disc_up, "_disc_down", Py_NewRef(self->disc_down), "_choice", choice,
        "_revealed", self->revealed, "_over", self->over ? Py_True : Py_False,
        "_to_play", ints(self->to_play, n), "_log", self->log,
        "_game_rounds", PyList_GetSlice(self->game_rounds, 0, PyList_GET_SIZE(self->game_rounds)),
        "_played", played, "_ruse_played", ints(rp, n));
fail:
    Py_XDECREF(hands);
    Py_XDECREF(choice);
    Py_XDECREF(paradise);
    Py_XDECREF(played);
    return NULL;
}

static PyObject *item(PyObject *d, const char *name) {
    PyObject *v = PyDict_GetItemString(d, name);
    if (!v) PyErr_Format(PyExc_KeyError, "%s", name);
    return v;
}

static int item_int(PyObject *d, const char *name, int *out) {
    PyObject *v = item(d, name);
    if (!v) return -1;
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = (int)x;
    return 0;
}

static PyObject *seed_bytes(PyObject *seed);

static PyObject *Core_load(Core *self, PyObject *d) {
    /* this core set from a dict of fields (native.py's _fields of a fast state) */
    if (!PyDict_Check(d)) { PyErr_SetString(PyExc_TypeError, "_load takes a dict"); return NULL; }
    int n = self->n, ruse[MAX_SEATS], played_ruse[MAX_SEATS];
    PyObject *hands = item(d, "hands"), *played = item(d, "played"), *choice = item(d, "choice"),
             *paradise = item(d, "paradise"), *v;
    if (!hands || !played || !choice || !paradise) return NULL;
    for (int s = 0; s < n; s++) {
        PyObject *c = PySequence_GetItem(choice, s);
        if (!c) return NULL;
        Py_XSETREF(self->choice[s], c == Py_None ? NULL : c);
        if (c == Py_None) Py_DECREF(c);
        PyObject *h = PySequence_GetItem(hands, s), *p = PySequence_GetItem(played, s);
        int r = h && p ? (read_mask(h, &self->hand[s]) < 0 || read_mask(p, &self->played[s]) < 0) : 1;
        Py_XDECREF(h);
        Py_XDECREF(p);
        if (r) return NULL;
        PyObject *codes = PySequence_GetItem(paradise, s);
        if (!codes) return NULL;
        int cs[NCARDS];
        int len = read_ints(codes, cs, NCARDS, "paradise");
        Py_DECREF(codes);
        if (len < 0) return NULL;
        self->npar[s] = len;
        for (int i = 0; i < len; i++) self->par[s][i] = (unsigned char)cs[i];
    }
    if (!(v = item(d, "has_ruse")) || read_ints(v, ruse, MAX_SEATS, "has_ruse") < 0) return NULL;
    if (!(v = item(d, "ruse_played")) || read_ints(v, played_ruse, MAX_SEATS, "ruse_played") < 0) return NULL;
    if (!(v = item(d, "scores")) || read_ints(v, self->scores, MAX_SEATS, "scores") < 0) return NULL;
    if (!(v = item(d, "score_base")) || read_ints(v, self->score_base, MAX_SEATS, "score_base") < 0) return NULL;
    if (!(v = item(d, "totals")) || read_ints(v, self->totals, MAX_SEATS, "totals") < 0) return NULL;
    if (!(v = item(d, "to_play")) || read_ints(v, self->to_play, MAX_SEATS, "to_play") < 0) return NULL;
    if (!(v = item(d, "order")) || read_ints(v, self->order, NGUARDS, "order") < 0) return NULL;
    if (item_int(d, "game_no", &self->game_no) < 0 || item_int(d, "round", &self->round) < 0
        || item_int(d, "step", &self->step) < 0 || item_int(d, "gpos", &self->gpos) < 0
        || item_int(d, "guard", &self->guard) < 0 || item_int(d, "reshuffled", &self->reshuffled) < 0
        || item_int(d, "shuffles", &self->shuffles) < 0 || item_int(d, "over", &self->over) < 0)
        return NULL;
    self->pending = 0;
    for (int s = 0; s < n; s++) {
        self->has_ruse[s] = ruse[s];
        self->ruse_played[s] = played_ruse[s];
        PyObject *c = self->choice[s];
        self->chosen_bombs[s] = 0;
        if (!c) { self->pending++; continue; }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(c); i++)
            if (PyLong_AsLong(PyTuple_GET_ITEM(c, i)) != ruse_card) self->chosen_bombs[s]++;
    }
    if (!(v = item(d, "seed"))) return NULL;
    Py_XSETREF(self->seed, Py_NewRef(v));
    Py_XSETREF(self->seed_text, seed_bytes(v));
    Py_XSETREF(self->events_cache, PyList_New(0));
    self->expanded = self->ev_rounds = 0;
    memset(self->ev_gains, 0, sizeof self->ev_gains);
    if (!self->seed_text || !self->events_cache) return NULL;
    if (!(v = item(d, "revealed"))) return NULL;
    Py_XSETREF(self->revealed, Py_NewRef(v));
    if (!(v = item(d, "disc_up"))) return NULL;
    Py_XSETREF(self->disc_up, Py_NewRef(v));
    if (!(v = item(d, "disc_down"))) return NULL;
    Py_XSETREF(self->disc_down, Py_NewRef(v));
    if (!(v = item(d, "log"))) return NULL;
    Py_XSETREF(self->log, PySequence_List(v));
    if (!(v = item(d, "game_rounds"))) return NULL;
    Py_XSETREF(self->game_rounds, PySequence_List(v));
    if (!self->log || !self->game_rounds) return NULL;
    clear_legal(self);
    stale_view(self);
    Py_RETURN_NONE;
}

static PyObject *Core_start(Core *self, PyObject *unused) {
    /* deal the first game from the seed (the fast engine's new_match) */
    if (deal_game(self) < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- the type ------------------------------------------------------------------------------- */

/* The game's settings a state starts from, read from the game once and kept for the next
 * state of the same game (a playout loop makes many): the last game's, with a reference to it. */
static struct {
    PyObject *game, *removed, *deal_sizes, *all_ruse;
    int n, advanced, ruse_v, series, deal_size, deck_len, deck[NCARDS];
} last;

static int game_settings(Core *self, PyObject *game) {
    if (game != last.game) {
        PyObject *removed = PyObject_GetAttrString(game, "removed");
        PyObject *deal_sizes = removed ? PyObject_GetAttrString(game, "_deal_sizes") : NULL;
        PyObject *all_ruse = deal_sizes ? PyObject_GetAttrString(game, "_all_ruse") : NULL;
        PyObject *deck = all_ruse ? PyObject_GetAttrString(game, "deck") : NULL;
        int ok = deck != NULL, flags[4] = {0};
        const char *names[4] = {"num_players", "advanced", "ruse", "series"};
        for (int i = 0; i < 4 && ok; i++) {
            PyObject *v = PyObject_GetAttrString(game, names[i]);
            ok = v && (flags[i] = i ? PyObject_IsTrue(v) : (int)PyLong_AsLong(v)) >= 0 && !PyErr_Occurred();
            Py_XDECREF(v);
        }
        int deal_size = 0, deck_cards[NCARDS], deck_len = -1;
        if (ok && get_int(game, "deal_size", &deal_size) < 0) ok = 0;
        if (ok) ok = (deck_len = read_ints(deck, deck_cards, NCARDS, "deck")) >= 0;
        Py_XDECREF(deck);
        if (ok && (flags[0] < 2 || flags[0] > MAX_SEATS || deal_size * flags[0] > deck_len)) {
            PyErr_SetString(PyExc_ValueError, "the native core takes 2..5 players, dealt from the deck");
            ok = 0;
        }
        if (!ok) {
            Py_XDECREF(removed);
            Py_XDECREF(deal_sizes);
            Py_XDECREF(all_ruse);
            return -1;
        }
        Py_XSETREF(last.game, Py_NewRef(game));
        Py_XSETREF(last.removed, removed);
        Py_XSETREF(last.deal_sizes, deal_sizes);
        Py_XSETREF(last.all_ruse, all_ruse);
        last.n = flags[0], last.advanced = flags[1], last.ruse_v = flags[2], last.series = flags[3];
        last.deal_size = deal_size;
        last.deck_len = deck_len;
        memcpy(last.deck, deck_cards, sizeof(int) * deck_len);
    }
    self->removed = Py_NewRef(last.removed);
    self->deal_sizes = Py_NewRef(last.deal_sizes);
    self->all_ruse = Py_NewRef(last.all_ruse);
    self->n = last.n, self->advanced = last.advanced, self->ruse_v = last.ruse_v, self->series = last.series;
    self->deal_size = last.deal_size;
    self->deck_len = last.deck_len;
    memcpy(self->deck, last.deck, sizeof(int) * last.deck_len);
    return 0;
}

static PyObject *seed_bytes(PyObject *seed) {
    /* the seed as the draws of chance hash it: b"%d" % seed */
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(seed, &overflow);
    if (!overflow && !(v == -1 && PyErr_Occurred())) {
        char text[32];
        int len = snprintf(text, sizeof text, "%lld", v);
        return PyBytes_FromStringAndSize(text, len);
    }
    PyErr_Clear();
    PyObject *text = PyObject_Str(seed);
    if (!text) return NULL;
    PyObject *b = PyUnicode_AsUTF8String(text);
    Py_DECREF(text);
    return b;
}

static PyObject *core_make(PyTypeObject *type, PyObject *game, PyObject *seed);

static PyObject *Core_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *game, *seed;
    if (!configured) { PyErr_SetString(PyExc_RuntimeError, "the native core is not configured"); return NULL; }
    if (!PyArg_ParseTuple(args, "OO!", &game, &PyLong_Type, &seed)) return NULL;
    return core_make(type, game, seed);
}

static PyObject *module_new_state(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    /* new_state(cls, game, seed): Core_new and _start in one call (new_match's state) */
    if (!configured) { PyErr_SetString(PyExc_RuntimeError, "the native core is not configured"); return NULL; }
    if (nargs != 3 || !PyType_Check(args[0]) || !PyType_IsSubtype((PyTypeObject *)args[0], &CoreType)
        || !PyLong_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "new_state(cls, game, seed: int)");
        return NULL;
    }
    Core *self = (Core *)core_make((PyTypeObject *)args[0], args[1], args[2]);
    if (self && deal_game(self) < 0) Py_CLEAR(self);
    return (PyObject *)self;
}

static PyObject *core_make(PyTypeObject *type, PyObject *game, PyObject *seed) {
    Core *self = (Core *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->game = Py_NewRef(game);
    self->seed = Py_NewRef(seed);
    self->log = PyList_New(0);
    self->game_rounds = PyList_New(0);
    self->events_cache = PyList_New(0);
    self->key = PyList_New(0);
    self->revealed = Py_NewRef(empty);
    self->disc_up = Py_NewRef(empty);
    self->disc_down = Py_NewRef(empty);
    self->seed_text = seed_bytes(seed);
    if (!self->log || !self->game_rounds || !self->events_cache || !self->key || !self->seed_text
        || game_settings(self, game) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    Py_SETREF(self->revealed, Py_NewRef(no_cards[self->n]));
    self->game_no = 1;
    for (int s = 0; s < self->n; s++) self->choice[s] = Py_NewRef(empty);
    return (PyObject *)self;
}

static int Core_traverse(Core *self, visitproc visit, void *arg) {
    Py_VISIT(self->game);
    Py_VISIT(self->events_cache);
    Py_VISIT(self->spare);
    Py_VISIT(self->log);
    Py_VISIT(self->game_rounds);
    Py_VISIT(self->key);
    return 0;
}

static int Core_clear(Core *self) {
    Py_CLEAR(self->game);
    Py_CLEAR(self->seed);
    Py_CLEAR(self->seed_text);
    Py_CLEAR(self->deal_sizes);
    Py_CLEAR(self->all_ruse);
    Py_CLEAR(self->events_cache);
    Py_CLEAR(self->spare);
    for (int s = 0; s < MAX_SEATS; s++) {
        Py_CLEAR(self->choice[s]);
        Py_CLEAR(self->legal[s]);
    }
    Py_CLEAR(self->revealed);
    Py_CLEAR(self->disc_up);
    Py_CLEAR(self->disc_down);
    Py_CLEAR(self->removed);
    Py_CLEAR(self->log);
    Py_CLEAR(self->game_rounds);
    Py_CLEAR(self->key);
    stale_view(self);
    return 0;
}

static void Core_dealloc(Core *self) {
    PyObject_GC_UnTrack(self);
    Core_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Core_methods[] = {
    {"seats_to_act", (PyCFunction)Core_seats_to_act, METH_NOARGS, "The seats still to choose."},
    {"legal_actions", (PyCFunction)Core_legal_actions, METH_O, "The seat's legal actions now."},
    {"apply_action", (PyCFunction)(void (*)(void))Core_apply_action, METH_FASTCALL, "Apply one action."},
    {"is_over", (PyCFunction)Core_is_over, METH_NOARGS, "Whether the match is over."},
    {"scores", (PyCFunction)Core_scores, METH_NOARGS, "The totals so far."},
    {"observation", (PyCFunction)Core_observation, METH_O, "What the seat may see."},
    {"public_observation", (PyCFunction)Core_public_observation, METH_NOARGS, "What a spectator may see."},
    {"clone", (PyCFunction)Core_clone, METH_NOARGS, "An independent copy."},
    {"feature_key", (PyCFunction)Core_feature_key, METH_NOARGS, "The fast engine's feature_key."},
    {"round_key", (PyCFunction)Core_round_key, METH_NOARGS, "(game number, round)."},
    {"_write_values", (PyCFunction)(void (*)(void))Core_write_values, METH_FASTCALL,
     "write_feature_values or write_step_values into a float32 buffer."},
    {"_export", (PyCFunction)Core_export, METH_NOARGS, "The fields a twin state is made of."},
    {"_load", (PyCFunction)Core_load, METH_O, "Set from a dict of fields."},
    {"_start", (PyCFunction)Core_start, METH_NOARGS, "Deal the first game."},
    {"_hand", (PyCFunction)Core_hand, METH_O, "A seat's true hand."},
    {NULL}};

static PyMemberDef Core_members[] = {
    {"game", T_OBJECT, offsetof(Core, game), READONLY, "The game."},
    {"num_players", T_INT, offsetof(Core, n), READONLY, "The number of seats."},
    {"_log", T_OBJECT, offsetof(Core, log), READONLY, "The compact log."},
    {NULL}};

static PyGetSetDef Core_getset[] = {
    {"events", (getter)Core_events, NULL, "The public event log so far.", NULL},
    {NULL}};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "arena.games.boom._native_core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = Core_new,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
    .tp_members = Core_members,
    .tp_getset = Core_getset,
    .tp_doc = "Boom: Runaway's state, its hot path native (arena/games/boom/native.py).",
};

/* ---- configure: the rules' constants and classes from the engine ---------------------------- */

static PyObject *configure(PyObject *module, PyObject *engine) {
    int num_cards, num_colours, num_guards, v;
    if (get_int(engine, "NUM_CARDS", &num_cards) < 0 || get_int(engine, "RUSE", &ruse_card) < 0
        || get_int(engine, "NUM_COLOURS", &num_colours) < 0 || get_int(engine, "NUM_GUARDS", &num_guards) < 0
        || get_int(engine, "SHORT_HAND_PLAYS_ALL", &short_hand_plays_all) < 0
        || get_int(engine, "FEWEST_CARDS_BONUS", &fewest_bonus) < 0
        || get_int(engine, "FEWEST_CARDS_BONUS_EVERY_ROUND", &bonus_every_round) < 0
        || get_int(engine, "GAME_END_HAND_SIZE", &game_end_hand_size) < 0
        || get_int(engine, "SERIES_TARGET", &series_target) < 0
        || get_int(engine, "MAX_GAME_ROUNDS", &max_game_rounds) < 0 || get_int(engine, "MAX_PLAYERS", &v) < 0)
        return NULL;
    if (num_cards != NCARDS || ruse_card != NCARDS || num_colours != NCOLOURS || num_guards != NGUARDS
        || v > MAX_SEATS) {
        PyErr_SetString(PyExc_ValueError, "the cards, guards or seats are not the native core's");
        return NULL;
    }
    PyObject *vals = PyObject_GetAttrString(engine, "VALUES");
    if (!vals) return NULL;
    int nv = read_ints(vals, values, NVALUES, "VALUES");
    Py_DECREF(vals);
    if (nv != NVALUES) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "VALUES has not 10 values");
        return NULL;
    }
    guard_tuples = PyObject_GetAttrString(engine, "GUARDS");
    if (!guard_tuples || !PyTuple_Check(guard_tuples) || PyTuple_GET_SIZE(guard_tuples) != NGUARDS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "GUARDS is not 8 guards");
        return NULL;
    }
    for (int g = 0; g < NGUARDS; g++) {
        PyObject *t = PyTuple_GET_ITEM(guard_tuples, g);
        if (!PyTuple_Check(t) || read_ints(t, guards[g], NCOLOURS, "GUARDS") != NCOLOURS) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a guard is not 5 limits");
            return NULL;
        }
    }
    PyObject *steps = PyObject_GetAttrString(engine, "STEP_CARDS");
    PyObject *ruse_steps = PyObject_GetAttrString(engine, "RUSE_STEPS");
    PyObject *pwh = PyObject_GetAttrString(engine, "plays_whole_hand");
    if (!steps || !ruse_steps || !pwh) { Py_XDECREF(steps); Py_XDECREF(ruse_steps); Py_XDECREF(pwh); return NULL; }
    for (int step = 1; step <= 2; step++) {
        PyObject *k = new_int(step);
        ruse_in_step[step] = PySequence_Contains(ruse_steps, k);
        Py_DECREF(k);
        if (ruse_in_step[step] < 0) goto fail;
    }
    for (int n = 2; n <= MAX_SEATS; n++) {
        PyObject *k = new_int(n), *t = PyObject_GetItem(steps, k);
        Py_DECREF(k);
        if (!t) goto fail;
        int r = read_ints(t, step_cards[n], 2, "STEP_CARDS");
        Py_DECREF(t);
        if (r != 2 || step_cards[n][0] > 2 || step_cards[n][1] > 2 || step_cards[n][0] < 1 || step_cards[n][1] < 1) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a step asks for more than 2 cards");
            goto fail;
        }
        for (int cards = 0; cards <= NCARDS; cards++)
            for (int ruse = 0; ruse < 2; ruse++) {
                PyObject *w = PyObject_CallFunction(pwh, "iiO", n, cards, ruse ? Py_True : Py_False);
                if (!w) goto fail;
                whole_hand[n][cards][ruse] = (unsigned char)PyObject_IsTrue(w);
                Py_DECREF(w);
            }
    }
    Py_DECREF(steps);
    Py_DECREF(ruse_steps);
    Py_DECREF(pwh);
    paradise_cards = PyObject_GetAttrString(engine, "_PARADISE_CARDS");
    obs_type = (PyTypeObject *)PyObject_GetAttrString(engine, "BoomObservation");
    r_round = PyObject_GetAttrString(engine, "_ROUND");
    r_ruse_return = PyObject_GetAttrString(engine, "_RUSE_RETURN");
    r_bonus = PyObject_GetAttrString(engine, "_BONUS");
    r_game_end = PyObject_GetAttrString(engine, "_GAME_END");
    r_series_end = PyObject_GetAttrString(engine, "_SERIES_END");
    end_names[0] = PyObject_GetAttrString(engine, "HAND_SIZE_END");
    end_names[1] = PyObject_GetAttrString(engine, "STUCK_END");
    end_names[2] = PyObject_GetAttrString(engine, "ROUND_LIMIT_END");
    if (!paradise_cards || !obs_type || !r_round || !r_ruse_return || !r_bonus || !r_game_end || !r_series_end
        || !end_names[0] || !end_names[1] || !end_names[2])
        return NULL;
    if (!PyTuple_Check(paradise_cards) || PyTuple_GET_SIZE(paradise_cards) != 2 * NCARDS) {
        PyErr_SetString(PyExc_ValueError, "_PARADISE_CARDS is not every code");
        return NULL;
    }
    if (slot_offsets(obs_type, obs_offsets, NUM_OBS_FIELDS) < 0) return NULL;
    {
        static const int at[1] = {OBS_HAND};
        static const char *const names[1] = {"hand"};
        if ((recycling = recycling_allowed(obs_type, at, names, 1)) < 0) return NULL;
    }
    event_type = (PyTypeObject *)PyObject_GetAttrString(engine, "Event");
    r_game_start = PyObject_GetAttrString(engine, "_GAME_START");
    colour_names = PyObject_GetAttrString(engine, "COLOURS");
    if (!event_type || !r_game_start || !colour_names || slot_offsets(event_type, event_offsets, 3) < 0
        || get_int(engine, "_DEAL_DRAW", &deal_draw) < 0 || get_int(engine, "_GUARD_DRAW", &guard_draw) < 0)
        return NULL;
    if (!PyTuple_Check(colour_names) || PyTuple_GET_SIZE(colour_names) != NCOLOURS) {
        PyErr_SetString(PyExc_ValueError, "COLOURS is not 5 colours");
        return NULL;
    }
    struct { PyObject **at; const char *name; } names[] = {
        {&k_game_start, "game_start"}, {&k_guard, "guard"}, {&k_reveal, "reveal"}, {&k_take_back, "take_back"},
        {&k_escape, "escape"}, {&k_ruse_return, "ruse_return"}, {&k_bonus, "fewest_cards_bonus"},
        {&k_game_end, "game_end"}, {&k_series_end, "series_end"}, {&k_game, "game"},
        {&k_hand_sizes, "hand_sizes"}, {&k_disc_up, "discarded_face_up"}, {&k_disc_down, "discarded_face_down"},
        {&k_removed, "removed"}, {&k_ruse, "ruse"}, {&k_round, "round"}, {&k_guard_no, "guard"},
        {&k_limits, "limits"}, {&k_guards_left, "guards_left"}, {&k_reshuffled, "reshuffled"}, {&k_step, "step"},
        {&k_cards, "cards"}, {&k_colour, "colour"}, {&k_face_up, "face_up"}, {&k_points, "points"},
        {&k_cards_left, "cards_left"}, {&k_scores, "scores"}, {&k_series_totals, "series_totals"},
        {&k_end, "end"}, {&k_stalemate, "stalemate"}, {&k_games, "games"}, {&k_totals, "totals"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!(*names[i].at = PyUnicode_InternFromString(names[i].name))) return NULL;
    if (small_ints_init() < 0) return NULL;
    empty = PyTuple_New(0);
    if (!minus_one && !(minus_one = new_int(-1))) return NULL;
    for (int c = 0; c <= NCARDS; c++) {
        singles[c] = Py_BuildValue("(i)", c);
        for (int d = c + 1; d <= NCARDS; d++) pairs[c][d] = Py_BuildValue("(ii)", c, d);
    }
    for (int n = 0; n <= MAX_SEATS; n++) {
        no_cards[n] = PyTuple_New(n);
        zeros_t[n] = PyTuple_New(n);
        for (int s = 0; s < n; s++) {
            PyTuple_SET_ITEM(no_cards[n], s, Py_NewRef(empty));
            PyTuple_SET_ITEM(zeros_t[n], s, new_int(0));
        }
        for (int mask = 0; mask < (1 << n); mask++) {
            int seats[MAX_SEATS], k = 0;
            for (int s = 0; s < n; s++)
                if (mask >> s & 1) seats[k++] = s;
            seat_all[n][mask] = ints(seats, k);
            flags_of[n][mask] = PyTuple_New(n);
            for (int s = 0; s < n; s++) PyTuple_SET_ITEM(flags_of[n][mask], s, PyBool_FromLong(mask >> s & 1));
        }
    }
    configured = 1;
    Py_RETURN_NONE;
fail:
    Py_XDECREF(steps);
    Py_XDECREF(ruse_steps);
    Py_XDECREF(pwh);
    return NULL;
}

static PyObject *module_blake2b(PyObject *module, PyObject *data) {
    /* hashlib.blake2b(data).digest(), as the draws of chance compute it (for the tests) */
    if (!PyBytes_Check(data)) { PyErr_SetString(PyExc_TypeError, "_blake2b takes bytes"); return NULL; }
    unsigned char out[64];
    blake2b(out, (const unsigned char *)PyBytes_AS_STRING(data), (size_t)PyBytes_GET_SIZE(data));
    return PyBytes_FromStringAndSize((const char *)out, 64);
}

static PyMethodDef module_methods[] = {
    {"new_state", (PyCFunction)(void (*)(void))module_new_state, METH_FASTCALL,
     "A started state of a Core subclass for a game and a seed (Core(game, seed), then _start)."},
    {"configure", configure, METH_O, "Read the rules' constants and classes from the engine."},
    {"_blake2b", module_blake2b, METH_O, "BLAKE2b-512 of bytes (the tests check it)."},
    {NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_native_core", NULL, -1, module_methods};

PyMODINIT_FUNC PyInit__native_core(void) {
    if (PyType_Ready(&CoreType) < 0 || PyType_Ready(&PairsType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Core", (PyObject *)&CoreType) < 0
        || PyModule_AddObjectRef(m, "LegalPairs", (PyObject *)&PairsType) < 0
        || PyModule_AddStringConstant(m, "SOURCE_DIGEST", SOURCE_DIGEST) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
