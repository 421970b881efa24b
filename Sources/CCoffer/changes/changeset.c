/*
 * changes/changeset.c — the collection change-set algorithms declared in
 * changes/changeset.h: index sets kept as sorted ranges, the list change
 * builder, the merge of consecutive change sets and the results diff (a
 * longest increasing subsequence for ordered results). The semantics follow
 * realm-core's CollectionChangeBuilder (facts, not code, carried over).
 */
#include "changes/changeset.h"

#include <stdlib.h>
#include <string.h>

#define CF_NPOS UINT64_MAX

/* ------------------------------------------------------------------------ */
/* Index sets: storage                                                       */
/* ------------------------------------------------------------------------ */

void cf_index_set_free(cf_index_set *s)
{
    if (s == NULL)
        return;
    free(s->ranges);
    s->ranges = NULL;
    s->count = s->capacity = 0;
}

static int set_reserve(cf_index_set *s, size_t need)
{
    if (need <= s->capacity)
        return 0;
    size_t cap = s->capacity ? s->capacity : 4;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / sizeof(cf_index_range))
            return -1;
        cap *= 2;
    }
    cf_index_range *p = realloc(s->ranges, cap * sizeof *p);
    if (p == NULL)
        return -1;
    s->ranges = p;
    s->capacity = cap;
    return 0;
}

/* Replaces `dst` by `src` (taking its storage). */
static void set_replace(cf_index_set *dst, cf_index_set *src)
{
    cf_index_set_free(dst);
    *dst = *src;
    memset(src, 0, sizeof *src);
}

static int set_copy(cf_index_set *dst, const cf_index_set *src)
{
    memset(dst, 0, sizeof *dst);
    if (src->count == 0)
        return 0;
    if (set_reserve(dst, src->count) != 0)
        return -1;
    memcpy(dst->ranges, src->ranges, src->count * sizeof *src->ranges);
    dst->count = src->count;
    return 0;
}

/* Appends [begin, end) to a set being built in ascending order of `begin`;
 * overlapping or adjacent ranges coalesce with the last one. */
static int set_push_range(cf_index_set *s, uint64_t begin, uint64_t end)
{
    if (begin >= end)
        return 0;
    if (s->count > 0) {
        cf_index_range *last = &s->ranges[s->count - 1];
        if (begin <= last->end) {
            if (end > last->end)
                last->end = end;
            return 0;
        }
    }
    if (set_reserve(s, s->count + 1) != 0)
        return -1;
    s->ranges[s->count++] = (cf_index_range){begin, end};
    return 0;
}

static void set_remove_ranges(cf_index_set *s, size_t at, size_t n)
{
    memmove(&s->ranges[at], &s->ranges[at + n], (s->count - at - n) * sizeof *s->ranges);
    s->count -= n;
}

/* First range whose end is greater than `index` (count if none). */
static size_t set_find(const cf_index_set *s, uint64_t index)
{
    size_t lo = 0, hi = s->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ranges[mid].end <= index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ------------------------------------------------------------------------ */
/* Index sets: queries and single-index edits                                */
/* ------------------------------------------------------------------------ */

uint64_t cf_index_set_size(const cf_index_set *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->count; i++)
        n += s->ranges[i].end - s->ranges[i].begin;
    return n;
}

bool cf_index_set_contains(const cf_index_set *s, uint64_t index)
{
    size_t i = set_find(s, index);
    return i < s->count && s->ranges[i].begin <= index;
}

void cf_index_set_copy_to(const cf_index_set *s, uint64_t *out)
{
    for (size_t i = 0; i < s->count; i++)
        for (uint64_t v = s->ranges[i].begin; v < s->ranges[i].end; v++)
            *out++ = v;
}

int cf_index_set_add_range(cf_index_set *s, uint64_t begin, uint64_t end)
{
    if (begin >= end)
        return 0;
    /* Ranges first..last-1 overlap or touch [begin, end): merge them all. */
    size_t first = 0, last;
    while (first < s->count && s->ranges[first].end < begin)
        first++;
    last = first;
    while (last < s->count && s->ranges[last].begin <= end)
        last++;
    if (first == last) {
        if (set_reserve(s, s->count + 1) != 0)
            return -1;
        memmove(&s->ranges[first + 1], &s->ranges[first], (s->count - first) * sizeof *s->ranges);
        s->ranges[first] = (cf_index_range){begin, end};
        s->count++;
        return 0;
    }
    cf_index_range *r = &s->ranges[first];
    if (begin < r->begin)
        r->begin = begin;
    r->end = s->ranges[last - 1].end > end ? s->ranges[last - 1].end : end;
    set_remove_ranges(s, first + 1, last - first - 1);
    return 0;
}

int cf_index_set_add(cf_index_set *s, uint64_t index)
{
    return cf_index_set_add_range(s, index, index + 1);
}

/* Removes `index` if present. */
static int set_remove(cf_index_set *s, uint64_t index)
{
    size_t i = set_find(s, index);
    if (i == s->count || s->ranges[i].begin > index)
        return 0;
    cf_index_range *r = &s->ranges[i];
    if (r->begin == index && r->end == index + 1) {
        set_remove_ranges(s, i, 1);
    } else if (r->begin == index) {
        r->begin++;
    } else if (r->end == index + 1) {
        r->end--;
    } else {
        if (set_reserve(s, s->count + 1) != 0)
            return -1;
        r = &s->ranges[i];
        memmove(&s->ranges[i + 1], r, (s->count - i) * sizeof *r);
        s->count++;
        s->ranges[i].end = index;
        s->ranges[i + 1].begin = index + 1;
    }
    return 0;
}

/* Number of indices below `index`. */
static uint64_t set_count_below(const cf_index_set *s, uint64_t index)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->count && s->ranges[i].begin < index; i++)
        n += (s->ranges[i].end < index ? s->ranges[i].end : index) - s->ranges[i].begin;
    return n;
}

/* Maps an index counted among the positions NOT in `s` to the full space:
 * the index-th position that `s` does not hold. */
static uint64_t set_shift(const cf_index_set *s, uint64_t index)
{
    for (size_t i = 0; i < s->count && s->ranges[i].begin <= index; i++)
        index += s->ranges[i].end - s->ranges[i].begin;
    return index;
}

/* The inverse for positions not in `s`: how many non-`s` positions precede. */
static uint64_t set_unshift(const cf_index_set *s, uint64_t index)
{
    return index - set_count_below(s, index);
}

/* Positions >= index move up by one; `index` itself is not added. */
static int set_shift_for_insert_at(cf_index_set *s, uint64_t index)
{
    size_t i = set_find(s, index);
    if (i == s->count)
        return 0;
    if (s->ranges[i].begin < index) { /* split the range around the gap */
        if (set_reserve(s, s->count + 1) != 0)
            return -1;
        memmove(&s->ranges[i + 1], &s->ranges[i], (s->count - i) * sizeof *s->ranges);
        s->count++;
        s->ranges[i].end = index;
        s->ranges[i + 1].begin = index;
        i++;
    }
    for (; i < s->count; i++) {
        s->ranges[i].begin++;
        s->ranges[i].end++;
    }
    return 0;
}

/* An element was inserted at `index`: later positions move up, `index` joins. */
static int set_insert_at(cf_index_set *s, uint64_t index)
{
    if (set_shift_for_insert_at(s, index) != 0)
        return -1;
    return cf_index_set_add(s, index);
}

/* The element at `index` was removed: it leaves the set, later positions
 * move down by one. */
static void set_erase_at(cf_index_set *s, uint64_t index)
{
    size_t i = set_find(s, index);
    if (i == s->count)
        return;
    size_t shift_from = i;
    if (s->ranges[i].begin <= index) { /* the range holds index: it shrinks */
        s->ranges[i].end--;
        if (s->ranges[i].begin == s->ranges[i].end)
            set_remove_ranges(s, i, 1);
        else
            shift_from = i + 1;
    }
    for (size_t k = shift_from; k < s->count; k++) {
        s->ranges[k].begin--;
        s->ranges[k].end--;
    }
    /* The gap that closed may join the neighbours. */
    if (shift_from > 0 && shift_from < s->count &&
        s->ranges[shift_from - 1].end == s->ranges[shift_from].begin) {
        s->ranges[shift_from - 1].end = s->ranges[shift_from].end;
        set_remove_ranges(s, shift_from, 1);
    }
}

/* Like set_erase_at(); returns CF_NPOS if `index` was in the set, otherwise
 * its unshifted value (see set_unshift). */
static uint64_t set_erase_or_unshift(cf_index_set *s, uint64_t index)
{
    uint64_t r = cf_index_set_contains(s, index) ? CF_NPOS : set_unshift(s, index);
    set_erase_at(s, index);
    return r;
}

/* Adds set_shift(s, index) and returns it. */
static int set_add_shifted(cf_index_set *s, uint64_t index, uint64_t *added)
{
    *added = set_shift(s, index);
    return cf_index_set_add(s, *added);
}

/* ------------------------------------------------------------------------ */
/* Index sets: whole-set operations (linear in the ranges)                   */
/* ------------------------------------------------------------------------ */

/* out = { v - |{t < v}| : v in s, v not in t } — the positions of `s` after
 * the elements at the positions of `t` were removed. */
static int set_erase_at_set(const cf_index_set *s, const cf_index_set *t, cf_index_set *out)
{
    memset(out, 0, sizeof *out);
    size_t ti = 0;
    uint64_t removed = 0;
    for (size_t si = 0; si < s->count; si++) {
        uint64_t x = s->ranges[si].begin, e = s->ranges[si].end;
        while (x < e) {
            while (ti < t->count && t->ranges[ti].end <= x) {
                removed += t->ranges[ti].end - t->ranges[ti].begin;
                ti++;
            }
            if (ti < t->count && t->ranges[ti].begin <= x) {
                x = t->ranges[ti].end; /* inside a removed run */
                continue;
            }
            uint64_t y = ti < t->count && t->ranges[ti].begin < e ? t->ranges[ti].begin : e;
            if (set_push_range(out, x - removed, y - removed) != 0) {
                cf_index_set_free(out);
                return -1;
            }
            x = y;
        }
    }
    return 0;
}

/* out = { set_shift(t, v) : v in s } — the positions of `s` after elements
 * were inserted at the positions of `t`. */
static int set_shift_for_insert_at_set(const cf_index_set *s, const cf_index_set *t,
                                       cf_index_set *out)
{
    memset(out, 0, sizeof *out);
    size_t ti = 0;
    uint64_t added = 0;
    for (size_t si = 0; si < s->count; si++) {
        uint64_t x = s->ranges[si].begin, e = s->ranges[si].end;
        while (x < e) {
            while (ti < t->count && t->ranges[ti].begin <= x + added) {
                added += t->ranges[ti].end - t->ranges[ti].begin;
                ti++;
            }
            uint64_t y = e;
            if (ti < t->count && t->ranges[ti].begin - (x + added) < e - x)
                y = x + (t->ranges[ti].begin - (x + added));
            if (set_push_range(out, x + added, y + added) != 0) {
                cf_index_set_free(out);
                return -1;
            }
            x = y;
        }
    }
    return 0;
}

/* out = a union b, a minus b, or a intersected with b (by `how`). */
enum set_combine { SET_UNION, SET_MINUS, SET_INTERSECT };

static int set_combine(const cf_index_set *a, const cf_index_set *b, enum set_combine how,
                       cf_index_set *out)
{
    memset(out, 0, sizeof *out);
    size_t ai = 0, bi = 0;
    int rc = 0;
    if (how == SET_UNION) {
        while (rc == 0 && (ai < a->count || bi < b->count)) {
            const cf_index_range *r;
            if (bi == b->count || (ai < a->count && a->ranges[ai].begin <= b->ranges[bi].begin))
                r = &a->ranges[ai++];
            else
                r = &b->ranges[bi++];
            rc = set_push_range(out, r->begin, r->end);
        }
    } else {
        for (; rc == 0 && ai < a->count; ai++) {
            uint64_t x = a->ranges[ai].begin, e = a->ranges[ai].end;
            while (rc == 0 && x < e) {
                while (bi < b->count && b->ranges[bi].end <= x)
                    bi++;
                bool in_b = bi < b->count && b->ranges[bi].begin <= x;
                uint64_t y = e;
                if (bi < b->count) {
                    uint64_t edge = in_b ? b->ranges[bi].end : b->ranges[bi].begin;
                    if (edge < y)
                        y = edge;
                }
                if (in_b == (how == SET_INTERSECT))
                    rc = set_push_range(out, x, y);
                x = y;
            }
        }
    }
    if (rc != 0)
        cf_index_set_free(out);
    return rc;
}

/* s = s union t. */
static int set_add_set(cf_index_set *s, const cf_index_set *t)
{
    if (t->count == 0)
        return 0;
    cf_index_set u;
    if (set_combine(s, t, SET_UNION, &u) != 0)
        return -1;
    set_replace(s, &u);
    return 0;
}

/* Applies a whole-set operation in place: s = op(s, t). */
static int set_apply(cf_index_set *s, const cf_index_set *t,
                     int (*op)(const cf_index_set *, const cf_index_set *, cf_index_set *))
{
    if (t->count == 0)
        return 0;
    cf_index_set r;
    if (op(s, t, &r) != 0)
        return -1;
    set_replace(s, &r);
    return 0;
}

static int set_minus(const cf_index_set *a, const cf_index_set *b, cf_index_set *out)
{
    return set_combine(a, b, SET_MINUS, out);
}

/* Elements were inserted at the positions of `t`: shift, then add them. */
static int set_insert_at_set(cf_index_set *s, const cf_index_set *t)
{
    if (set_apply(s, t, set_shift_for_insert_at_set) != 0)
        return -1;
    return set_add_set(s, t);
}

/* ------------------------------------------------------------------------ */
/* Change sets                                                               */
/* ------------------------------------------------------------------------ */

void cf_changeset_init(cf_changeset *cs)
{
    memset(cs, 0, sizeof *cs);
}

void cf_changeset_free(cf_changeset *cs)
{
    if (cs == NULL)
        return;
    cf_index_set_free(&cs->deletions);
    cf_index_set_free(&cs->insertions);
    cf_index_set_free(&cs->modifications);
    cf_index_set_free(&cs->modifications_new);
    cf_index_set_free(&cs->modified_insertions);
    free(cs->moves);
    cf_changeset_init(cs);
}

bool cf_changeset_is_empty(const cf_changeset *cs)
{
    return cs->deletions.count == 0 && cs->insertions.count == 0 &&
           cs->modifications.count == 0 && cs->modifications_new.count == 0 &&
           cs->move_count == 0 && !cs->collection_was_cleared &&
           !cs->collection_root_was_deleted;
}

static int push_move(cf_changeset *cs, uint64_t from, uint64_t to)
{
    if (cs->move_count == cs->move_capacity) {
        size_t cap = cs->move_capacity ? cs->move_capacity * 2 : 4;
        if (cap > SIZE_MAX / sizeof *cs->moves)
            return -1;
        cf_move *p = realloc(cs->moves, cap * sizeof *p);
        if (p == NULL)
            return -1;
        cs->moves = p;
        cs->move_capacity = cap;
    }
    cs->moves[cs->move_count++] = (cf_move){from, to};
    return 0;
}

static void drop_move(cf_changeset *cs, size_t i)
{
    memmove(&cs->moves[i], &cs->moves[i + 1], (cs->move_count - i - 1) * sizeof *cs->moves);
    cs->move_count--;
}

/*
 * The working form of a change set (the builder's, and the merge's) keeps
 * the changed rows in NEW indices only, inserted rows included, in
 * modifications_new; `modifications` and `modified_insertions` are empty.
 * These two convert between the working and the reported form.
 */
static int to_reported_form(cf_changeset *cs)
{
    cf_index_set kept = {0}, inserted = {0}, unshifted = {0}, old = {0};
    int rc = -1;
    /* A kept row's old index: drop the inserted positions before it, then
     * make room for the deleted ones. */
    if (set_minus(&cs->modifications_new, &cs->insertions, &kept) == 0 &&
        set_combine(&cs->modifications_new, &cs->insertions, SET_INTERSECT, &inserted) == 0 &&
        set_erase_at_set(&kept, &cs->insertions, &unshifted) == 0 &&
        set_shift_for_insert_at_set(&unshifted, &cs->deletions, &old) == 0) {
        set_replace(&cs->modifications, &old);
        set_replace(&cs->modifications_new, &kept);
        set_replace(&cs->modified_insertions, &inserted);
        rc = 0;
    }
    cf_index_set_free(&kept);
    cf_index_set_free(&inserted);
    cf_index_set_free(&unshifted);
    cf_index_set_free(&old);
    return rc;
}

static int to_working_form(cf_changeset *cs)
{
    if (set_add_set(&cs->modifications_new, &cs->modified_insertions) != 0)
        return -1;
    cf_index_set_free(&cs->modifications);
    cf_index_set_free(&cs->modified_insertions);
    return 0;
}

static int changeset_copy(cf_changeset *dst, const cf_changeset *src)
{
    cf_changeset_init(dst);
    if (set_copy(&dst->deletions, &src->deletions) != 0 ||
        set_copy(&dst->insertions, &src->insertions) != 0 ||
        set_copy(&dst->modifications, &src->modifications) != 0 ||
        set_copy(&dst->modifications_new, &src->modifications_new) != 0 ||
        set_copy(&dst->modified_insertions, &src->modified_insertions) != 0)
        goto fail;
    for (size_t i = 0; i < src->move_count; i++)
        if (push_move(dst, src->moves[i].from, src->moves[i].to) != 0)
            goto fail;
    dst->collection_was_cleared = src->collection_was_cleared;
    dst->collection_root_was_deleted = src->collection_root_was_deleted;
    return 0;
fail:
    cf_changeset_free(dst);
    return -1;
}

/* A move that ended where the row would be anyway is no move: drop it and
 * its deletion and insertion. */
static int drop_stale_moves(cf_changeset *f)
{
    for (size_t i = 0; i < f->move_count;) {
        cf_move m = f->moves[i];
        if (m.from - set_count_below(&f->deletions, m.from) !=
            m.to - set_count_below(&f->insertions, m.to)) {
            i++;
            continue;
        }
        if (set_remove(&f->deletions, m.from) != 0 || set_remove(&f->insertions, m.to) != 0)
            return -1;
        drop_move(f, i);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* List change builder                                                       */
/* ------------------------------------------------------------------------ */

void cf_list_changes_init(cf_list_changes *b)
{
    cf_changeset_init(&b->work);
}

void cf_list_changes_free(cf_list_changes *b)
{
    if (b != NULL)
        cf_changeset_free(&b->work);
}

int cf_list_changes_insert(cf_list_changes *b, uint64_t index)
{
    cf_changeset *w = &b->work;
    if (set_shift_for_insert_at(&w->modifications_new, index) != 0 ||
        set_insert_at(&w->insertions, index) != 0)
        return -1;
    for (size_t i = 0; i < w->move_count; i++)
        if (w->moves[i].to >= index)
            w->moves[i].to++;
    w->collection_was_cleared = false;
    return 0;
}

int cf_list_changes_erase(cf_list_changes *b, uint64_t index)
{
    cf_changeset *w = &b->work;
    set_erase_at(&w->modifications_new, index);
    uint64_t old = set_erase_or_unshift(&w->insertions, index);
    uint64_t added;
    /* An erased insertion just disappears; an old row becomes a deletion. */
    if (old != CF_NPOS && set_add_shifted(&w->deletions, old, &added) != 0)
        return -1;
    for (size_t i = 0; i < w->move_count;) {
        if (w->moves[i].to == index) {
            drop_move(w, i); /* the moved row is gone: its deletion stays */
            continue;
        }
        if (w->moves[i].to > index)
            w->moves[i].to--;
        i++;
    }
    return 0;
}

int cf_list_changes_modify(cf_list_changes *b, uint64_t index)
{
    return cf_index_set_add(&b->work.modifications_new, index);
}

int cf_list_changes_move(cf_list_changes *b, uint64_t from, uint64_t to)
{
    if (from == to)
        return 0;
    cf_changeset *w = &b->work;
    bool moved_before = false;
    for (size_t i = 0; i < w->move_count; i++) {
        cf_move *m = &w->moves[i];
        if (m->to == from) { /* A -> B then B -> C is A -> C */
            m->to = to;
            moved_before = true;
            set_erase_at(&w->insertions, from);
            if (set_insert_at(&w->insertions, to) != 0)
                return -1;
        } else if (m->to >= to && m->to < from) {
            m->to++;
        } else if (m->to <= to && m->to > from) {
            m->to--;
        }
    }
    if (!moved_before) {
        uint64_t old = set_erase_or_unshift(&w->insertions, from);
        if (set_insert_at(&w->insertions, to) != 0)
            return -1;
        /* A row inserted in this transaction stays a plain insertion. */
        if (old != CF_NPOS) {
            uint64_t old_index;
            if (set_add_shifted(&w->deletions, old, &old_index) != 0 ||
                push_move(w, old_index, to) != 0)
                return -1;
        }
    }
    bool modified = cf_index_set_contains(&w->modifications_new, from);
    set_erase_at(&w->modifications_new, from);
    return modified ? set_insert_at(&w->modifications_new, to)
                    : set_shift_for_insert_at(&w->modifications_new, to);
}

int cf_list_changes_swap(cf_list_changes *b, uint64_t i, uint64_t j)
{
    if (i == j)
        return 0;
    if (i > j) {
        uint64_t t = i;
        i = j;
        j = t;
    }
    /* The later element moves down to i, which pushes the earlier one to
     * i + 1; it then moves up to j (already there when j == i + 1). */
    if (cf_list_changes_move(b, j, i) != 0)
        return -1;
    return j == i + 1 ? 0 : cf_list_changes_move(b, i + 1, j);
}

int cf_list_changes_clear(cf_list_changes *b, uint64_t size)
{
    cf_changeset *w = &b->work;
    /* Old size = current size + rows already deleted - rows inserted. */
    uint64_t old_size = size + cf_index_set_size(&w->deletions) - cf_index_set_size(&w->insertions);
    cf_index_set_free(&w->modifications_new);
    cf_index_set_free(&w->insertions);
    cf_index_set_free(&w->deletions);
    w->move_count = 0;
    w->collection_was_cleared = true;
    return cf_index_set_add_range(&w->deletions, 0, old_size);
}

int cf_list_changes_root_deleted(cf_list_changes *b, uint64_t size)
{
    if (cf_list_changes_clear(b, size) != 0)
        return -1;
    b->work.collection_was_cleared = false;
    b->work.collection_root_was_deleted = true;
    return 0;
}

int cf_list_changes_finish(cf_list_changes *b, cf_changeset *out)
{
    cf_changeset_init(out);
    cf_changeset result;
    if (changeset_copy(&result, &b->work) != 0)
        return -1;
    /* A row moved back to where it started (e.g. two swaps) did not move. */
    if (drop_stale_moves(&result) != 0 || to_reported_form(&result) != 0) {
        cf_changeset_free(&result);
        return -1;
    }
    *out = result;
    cf_changeset_free(&b->work);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Merge                                                                     */
/* ------------------------------------------------------------------------ */

static ptrdiff_t find_move_from(const cf_changeset *cs, uint64_t from)
{
    for (size_t i = 0; i < cs->move_count; i++)
        if (cs->moves[i].from == from)
            return (ptrdiff_t)i;
    return -1;
}

/* Moves of the first change set, seen through the second (`s`, working
 * form; consumed moves are removed from it). */
static int merge_old_moves(cf_changeset *f, cf_changeset *s)
{
    size_t kept = 0;
    for (size_t i = 0; i < f->move_count; i++) {
        cf_move m = f->moves[i];
        ptrdiff_t again = find_move_from(s, m.to);
        if (again >= 0) { /* moved again: one move to the final place */
            uint64_t to = s->moves[again].to;
            if (cf_index_set_contains(&f->modifications_new, m.to) &&
                cf_index_set_add(&s->modifications_new, to) != 0)
                return -1;
            m.to = to;
            s->moves[again] = s->moves[s->move_count - 1];
            s->move_count--;
        } else if (cf_index_set_contains(&s->deletions, m.to)) {
            continue; /* deleted after the move: only the deletion remains */
        } else {
            m.to = set_shift(&s->insertions, set_unshift(&s->deletions, m.to));
        }
        f->moves[kept++] = m;
    }
    f->move_count = kept;
    return 0;
}

/* Both in working form; `s` is consumed (its content changes). */
static int merge_working(cf_changeset *f, cf_changeset *s)
{
    if (merge_old_moves(f, s) != 0)
        return -1;

    /* New moves of rows the first change set inserted stay insertions;
     * others keep a change made before the move, and get old indices. */
    size_t kept = 0;
    for (size_t i = 0; i < s->move_count; i++) {
        cf_move m = s->moves[i];
        if (cf_index_set_contains(&f->insertions, m.from))
            continue;
        if (cf_index_set_contains(&f->modifications_new, m.from) &&
            cf_index_set_add(&s->modifications_new, m.to) != 0)
            return -1;
        m.from = set_shift(&f->deletions, set_unshift(&f->insertions, m.from));
        s->moves[kept++] = m;
    }
    s->move_count = kept;
    for (size_t i = 0; i < s->move_count; i++)
        if (push_move(f, s->moves[i].from, s->moves[i].to) != 0)
            return -1;

    /* Later deletions of rows that existed before: in old indices. Rows
     * inserted and then deleted vanish. */
    cf_index_set surviving, old_deleted;
    if (set_erase_at_set(&s->deletions, &f->insertions, &surviving) != 0)
        return -1;
    int rc = set_shift_for_insert_at_set(&surviving, &f->deletions, &old_deleted);
    cf_index_set_free(&surviving);
    if (rc != 0)
        return -1;
    rc = set_add_set(&f->deletions, &old_deleted);
    cf_index_set_free(&old_deleted);
    if (rc != 0 || set_apply(&f->insertions, &s->deletions, set_erase_at_set) != 0 ||
        set_insert_at_set(&f->insertions, &s->insertions) != 0)
        return -1;

    if (drop_stale_moves(f) != 0)
        return -1;

    if (set_apply(&f->modifications_new, &s->deletions, set_erase_at_set) != 0 ||
        set_apply(&f->modifications_new, &s->insertions, set_shift_for_insert_at_set) != 0 ||
        set_add_set(&f->modifications_new, &s->modifications_new) != 0)
        return -1;

    f->collection_root_was_deleted = f->collection_root_was_deleted || s->collection_root_was_deleted;
    f->collection_was_cleared =
        s->collection_was_cleared || (f->collection_was_cleared && s->insertions.count == 0);
    return 0;
}

int cf_changeset_merge(cf_changeset *first, const cf_changeset *second)
{
    if (cf_changeset_is_empty(second) && second->modified_insertions.count == 0)
        return 0;
    cf_changeset s, f;
    if (changeset_copy(&s, second) != 0)
        return -1;
    if (cf_changeset_is_empty(first) && first->modified_insertions.count == 0) {
        cf_changeset_free(first);
        *first = s;
        return 0;
    }
    /* Work on a copy so that `first` is untouched if memory runs out. */
    if (changeset_copy(&f, first) != 0) {
        cf_changeset_free(&s);
        return -1;
    }
    int rc = 0;
    if (to_working_form(&f) != 0 || to_working_form(&s) != 0 || merge_working(&f, &s) != 0 ||
        to_reported_form(&f) != 0)
        rc = -1;
    cf_changeset_free(&s);
    if (rc != 0) {
        cf_changeset_free(&f);
        return -1;
    }
    cf_changeset_free(first);
    *first = f;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Results diff                                                              */
/* ------------------------------------------------------------------------ */

static int compare_keyed_rows(const void *a, const void *b)
{
    const cf_keyed_row *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

cf_keyed_row *cf_sorted_rows(const uint64_t *keys, size_t n)
{
    cf_keyed_row *rows = malloc((n ? n : 1) * sizeof *rows);
    if (rows == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        rows[i] = (cf_keyed_row){keys[i], i};
    qsort(rows, n, sizeof *rows, compare_keyed_rows);
    return rows;
}

/* For each new index, the old index of the same row (n-th occurrence of a
 * key matched with its n-th occurrence), or CF_NPOS for an inserted row. */
static uint64_t *match_rows(const uint64_t *old_keys, size_t old_count, const uint64_t *new_keys,
                            size_t new_count)
{
    cf_keyed_row *a = cf_sorted_rows(old_keys, old_count);
    cf_keyed_row *b = cf_sorted_rows(new_keys, new_count);
    uint64_t *prev = malloc((new_count ? new_count : 1) * sizeof *prev);
    if (a == NULL || b == NULL || prev == NULL) {
        free(a);
        free(b);
        free(prev);
        return NULL;
    }
    for (size_t j = 0; j < new_count; j++)
        prev[j] = CF_NPOS;
    size_t i = 0, j = 0;
    while (i < old_count && j < new_count) {
        if (a[i].key == b[j].key)
            prev[b[j++].index] = a[i++].index;
        else if (a[i].key < b[j].key)
            i++;
        else
            j++;
    }
    free(a);
    free(b);
    return prev;
}

/* A chain of stationary rows: longer wins, then more unchanged rows (changed
 * rows move on ties), then the smaller old index of its last row (as the
 * classic patience-sort LIS does: it keeps the earlier old row in place). */
typedef struct chain {
    uint64_t length, unchanged;
    uint64_t last_old; /* old index of the last row */
    size_t last;       /* kept-row number of the last row, or SIZE_MAX */
} chain;

static bool chain_better(chain a, chain b)
{
    if (a.length != b.length)
        return a.length > b.length;
    if (a.unchanged != b.unchanged)
        return a.unchanged > b.unchanged;
    return a.last_old < b.last_old;
}

/*
 * Marks in `stays` the kept rows (numbered in new order; old_index[k] is row
 * k's old index, distinct values below old_count) that form the best longest
 * increasing subsequence of old indices. A Fenwick tree over old indices
 * gives the best chain ending below any old index in O(log n).
 */
static int pick_stationary_rows(const uint64_t *old_index, const bool *changed, size_t kept,
                                size_t old_count, bool *stays)
{
    chain *tree = calloc(old_count + 1, sizeof *tree);
    size_t *parent = malloc((kept ? kept : 1) * sizeof *parent);
    if (tree == NULL || parent == NULL) {
        free(tree);
        free(parent);
        return -1;
    }
    chain none = {0, 0, UINT64_MAX, SIZE_MAX}, best = none;
    for (size_t p = 0; p <= old_count; p++)
        tree[p] = none;
    for (size_t k = 0; k < kept; k++) {
        chain before = none;
        for (size_t p = (size_t)old_index[k]; p > 0; p -= p & (~p + 1))
            if (chain_better(tree[p], before))
                before = tree[p];
        chain here = {before.length + 1, before.unchanged + (changed[k] ? 0 : 1), old_index[k], k};
        parent[k] = before.last;
        for (size_t p = (size_t)old_index[k] + 1; p <= old_count; p += p & (~p + 1))
            if (chain_better(here, tree[p]))
                tree[p] = here;
        if (chain_better(here, best))
            best = here;
        stays[k] = false;
    }
    for (size_t k = best.last; k != SIZE_MAX; k = parent[k])
        stays[k] = true;
    free(tree);
    free(parent);
    return 0;
}

int cf_changeset_diff(const uint64_t *old_keys, size_t old_count, const uint64_t *new_keys,
                      size_t new_count, cf_key_changed_fn changed, void *ctx, cf_diff_order order,
                      cf_changeset *out)
{
    cf_changeset_init(out);
    uint64_t *prev = match_rows(old_keys, old_count, new_keys, new_count);
    size_t cap = new_count ? new_count : 1;
    uint64_t *kept_old = malloc(cap * sizeof *kept_old);
    bool *kept_changed = malloc(cap * sizeof *kept_changed);
    bool *stays = malloc(cap * sizeof *stays);
    bool *old_kept = calloc(old_count ? old_count : 1, sizeof *old_kept);
    int rc = -1;
    if (prev == NULL || kept_old == NULL || kept_changed == NULL || stays == NULL ||
        old_kept == NULL)
        goto done;

    size_t kept = 0;
    for (size_t j = 0; j < new_count; j++) {
        if (prev[j] == CF_NPOS)
            continue;
        old_kept[prev[j]] = true;
        kept_old[kept] = prev[j];
        kept_changed[kept] = changed != NULL && changed(new_keys[j], ctx);
        kept++;
    }
    if (order == CF_DIFF_ORDERED) {
        if (pick_stationary_rows(kept_old, kept_changed, kept, old_count, stays) != 0)
            goto done;
    } else {
        for (size_t k = 0; k < kept; k++)
            stays[k] = true;
    }

    /* Rows that do not stay count as deleted and inserted. */
    for (size_t k = 0; k < kept; k++)
        if (!stays[k])
            old_kept[kept_old[k]] = false;
    for (size_t i = 0; i < old_count; i++)
        if (!old_kept[i] && set_push_range(&out->deletions, i, i + 1) != 0)
            goto done;
    size_t k = 0;
    for (size_t j = 0; j < new_count; j++) {
        if (prev[j] == CF_NPOS) {
            if (set_push_range(&out->insertions, j, j + 1) != 0)
                goto done;
            continue;
        }
        bool stay = stays[k], row_changed = kept_changed[k];
        k++;
        if (!stay && set_push_range(&out->insertions, j, j + 1) != 0)
            goto done;
        if (!row_changed)
            continue;
        if (!stay) {
            if (set_push_range(&out->modified_insertions, j, j + 1) != 0)
                goto done;
        } else if (set_push_range(&out->modifications_new, j, j + 1) != 0 ||
                   cf_index_set_add(&out->modifications, prev[j]) != 0) {
            goto done;
        }
    }
    rc = 0;
done:
    free(prev);
    free(kept_old);
    free(kept_changed);
    free(stays);
    free(old_kept);
    if (rc != 0)
        cf_changeset_free(out);
    return rc;
}
