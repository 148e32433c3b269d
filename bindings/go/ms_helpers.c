// C helpers of the Go binding (declared in ms_helpers.h); cgo compiles
// this file with the package.
#include "ms_helpers.h"

#include <stdlib.h>
#include <string.h>

// The last status's message when the last call failed, copied (the
// library's copy lives only until the thread's next call), else NULL.
static char* ms_msg(int32_t code) {
	if (code == MEMSTORED_STATUS_SUCCESS) return NULL;
	const char* m = memstored_get_last_status_message();
	return m[0] == '\0' ? NULL : strdup(m);
}

// The status of the call just made. `ok` false with a success status means
// a helper failed before calling the library (its malloc).
static ms_res ms_status(bool ok) {
	ms_res r = {NULL, 0, memstored_get_last_status_code(), NULL};
	if (!ok && r.code == MEMSTORED_STATUS_SUCCESS) {
		r.code = MEMSTORED_STATUS_SYSTEM_ERROR;
		r.msg = strdup("out of memory in the Go binding");
		return r;
	}
	r.msg = ms_msg(r.code);
	return r;
}

ms_res ms_status_of(bool ok) { return ms_status(ok); }

static ms_res ms_bytes(char* ptr, int32_t size) {
	ms_res r = ms_status(true);
	r.ptr = ptr;
	r.size = size;
	return r;
}

// NULL for "no value" (has == false); otherwise never NULL, so that an empty
// value is not taken for an absent one.
static const char* ms_opt(const char* p, bool has) {
	return has ? (p ? p : "") : NULL;
}

// Arrays built in C memory over the caller's packed bytes: `sizes` holds
// each string's size (for pairs: key, value, key, value...; a negative
// value size means a NULL value). Freed by the caller with free().
static MemstoredStr* ms_strs(const char* buf, const int32_t* sizes, int32_t n) {
	MemstoredStr* a = malloc(sizeof(*a) * (n > 0 ? n : 1));
	const char* p = buf ? buf : "";
	for (int32_t i = 0; a && i < n; i++) {
		a[i].ptr = p;
		a[i].size = sizes[i];
		p += sizes[i];
	}
	return a;
}

static MemstoredKeyValuePair* ms_pairs(const char* buf, const int32_t* sizes, int32_t n) {
	MemstoredKeyValuePair* a = malloc(sizeof(*a) * (n > 0 ? n : 1));
	const char* p = buf ? buf : "";
	for (int32_t i = 0; a && i < n; i++) {
		a[i].key_ptr = p;
		a[i].key_size = sizes[2 * i];
		p += sizes[2 * i];
		int32_t vs = sizes[2 * i + 1];
		a[i].value_ptr = vs < 0 ? NULL : p;
		a[i].value_size = vs < 0 ? 0 : vs;
		p += vs < 0 ? 0 : vs;
	}
	return a;
}

ms_res ms_open(const char* path, bool writable, const char* params, MemstoredDBM** out) {
	*out = memstored_dbm_open(path, writable, params);
	return ms_status(*out != NULL);
}

ms_res ms_close(MemstoredDBM* d) { return ms_status(memstored_dbm_close(d)); }

ms_res ms_get(MemstoredDBM* d, const char* k, int32_t ks) {
	int32_t size = 0;
	char* v = memstored_dbm_get(d, k, ks, &size);
	return ms_bytes(v, size);
}

// The value copied into the caller's buffer; `size` is its whole size,
// larger than `cap` when it did not fit (see memstored_dbm_get_to).
ms_res ms_get_to(MemstoredDBM* d, const char* k, int32_t ks, char* buf, int32_t cap) {
	int32_t size = memstored_dbm_get_to(d, k, ks, buf, cap);
	ms_res r = ms_status(size >= 0);
	r.size = size;
	return r;
}

ms_res ms_set(MemstoredDBM* d, const char* k, int32_t ks, const char* v, int32_t vs,
		bool overwrite) {
	return ms_status(memstored_dbm_set(d, k, ks, ms_opt(v, true), vs, overwrite));
}

ms_res ms_set_and_get(MemstoredDBM* d, const char* k, int32_t ks, const char* v,
		int32_t vs, bool overwrite) {
	int32_t size = 0;
	char* old = memstored_dbm_set_and_get(d, k, ks, ms_opt(v, true), vs, overwrite, &size);
	return ms_bytes(old, size);
}

ms_res ms_remove(MemstoredDBM* d, const char* k, int32_t ks) {
	return ms_status(memstored_dbm_remove(d, k, ks));
}

ms_res ms_remove_and_get(MemstoredDBM* d, const char* k, int32_t ks) {
	int32_t size = 0;
	char* v = memstored_dbm_remove_and_get(d, k, ks, &size);
	return ms_bytes(v, size);
}

ms_res ms_append(MemstoredDBM* d, const char* k, int32_t ks, const char* v, int32_t vs,
		const char* delim, int32_t ds) {
	return ms_status(memstored_dbm_append(d, k, ks, ms_opt(v, true), vs, ms_opt(delim, true), ds));
}

ms_res ms_compare_exchange(MemstoredDBM* d, const char* k, int32_t ks,
		const char* e, int32_t es, bool has_e, const char* v, int32_t vs, bool has_v) {
	return ms_status(memstored_dbm_compare_exchange(
		d, k, ks, ms_opt(e, has_e), es, ms_opt(v, has_v), vs));
}

ms_res ms_increment(MemstoredDBM* d, const char* k, int32_t ks, int64_t inc,
		int64_t init, int64_t* out) {
	*out = memstored_dbm_increment(d, k, ks, inc, init);
	return ms_status(true);
}

ms_res ms_compare_exchange_multi(MemstoredDBM* d, const char* ebuf,
		const int32_t* esizes, int32_t ne, const char* dbuf, const int32_t* dsizes, int32_t nd) {
	MemstoredKeyValuePair* e = ms_pairs(ebuf, esizes, ne);
	MemstoredKeyValuePair* w = ms_pairs(dbuf, dsizes, nd);
	bool ok = e && w && memstored_dbm_compare_exchange_multi(d, e, ne, w, nd);
	ms_res r = ms_status(ok);
	free(e);
	free(w);
	return r;
}

ms_res ms_get_multi(MemstoredDBM* d, const char* buf, const int32_t* sizes, int32_t n) {
	MemstoredStr* keys = ms_strs(buf, sizes, n);
	int32_t num = 0;
	MemstoredKeyValuePair* got = keys ? memstored_dbm_get_multi(d, keys, n, &num) : NULL;
	free(keys);
	return ms_bytes((char*)got, num);
}

ms_res ms_set_multi(MemstoredDBM* d, const char* buf, const int32_t* sizes, int32_t n,
		bool overwrite) {
	MemstoredKeyValuePair* recs = ms_pairs(buf, sizes, n);
	bool ok = recs && memstored_dbm_set_multi(d, recs, n, overwrite);
	ms_res r = ms_status(ok);
	free(recs);
	return r;
}

ms_res ms_remove_multi(MemstoredDBM* d, const char* buf, const int32_t* sizes, int32_t n) {
	MemstoredStr* keys = ms_strs(buf, sizes, n);
	bool ok = keys && memstored_dbm_remove_multi(d, keys, n);
	ms_res r = ms_status(ok);
	free(keys);
	return r;
}

ms_res ms_count(MemstoredDBM* d, int64_t* out) {
	*out = memstored_dbm_count(d);
	return ms_status(*out >= 0);
}

ms_res ms_clear(MemstoredDBM* d) { return ms_status(memstored_dbm_clear(d)); }

ms_res ms_rebuild(MemstoredDBM* d, const char* params) {
	return ms_status(memstored_dbm_rebuild(d, params));
}

ms_res ms_should_be_rebuilt(MemstoredDBM* d, bool* out) {
	*out = memstored_dbm_should_be_rebuilt(d);
	return ms_status(true);
}

ms_res ms_synchronize(MemstoredDBM* d, bool hard, const char* params) {
	return ms_status(memstored_dbm_synchronize(d, hard, params));
}

ms_res ms_search(MemstoredDBM* d, const char* mode, const char* p, int32_t ps,
		int32_t capacity) {
	int32_t num = 0;
	MemstoredStr* keys = memstored_dbm_search(d, mode, ms_opt(p, true), ps, capacity, &num);
	return ms_bytes((char*)keys, num);
}

ms_res ms_inspect(MemstoredDBM* d) {
	int32_t num = 0;
	MemstoredKeyValuePair* props = memstored_dbm_inspect(d, &num);
	return ms_bytes((char*)props, num);
}

ms_res ms_make_iterator(MemstoredDBM* d, MemstoredDBMIter** out) {
	*out = memstored_dbm_make_iterator(d);
	return ms_status(*out != NULL);
}


ms_res ms_iter_move(MemstoredDBMIter* it, int op, const char* k, int32_t ks,
		bool inclusive) {
	const char* key = ms_opt(k, true);
	bool ok = false;
	switch (op) {
		case MS_FIRST: ok = memstored_dbm_iter_first(it); break;
		case MS_LAST: ok = memstored_dbm_iter_last(it); break;
		case MS_NEXT: ok = memstored_dbm_iter_next(it); break;
		case MS_PREVIOUS: ok = memstored_dbm_iter_previous(it); break;
		case MS_REMOVE: ok = memstored_dbm_iter_remove(it); break;
		case MS_JUMP: ok = memstored_dbm_iter_jump(it, key, ks); break;
		case MS_JUMP_LOWER: ok = memstored_dbm_iter_jump_lower(it, key, ks, inclusive); break;
		case MS_JUMP_UPPER: ok = memstored_dbm_iter_jump_upper(it, key, ks, inclusive); break;
		case MS_SET: ok = memstored_dbm_iter_set(it, key, ks); break;
	}
	return ms_status(ok);
}

ms_rec_res ms_iter_get(MemstoredDBMIter* it, bool step, bool want_key, bool want_value) {
	ms_rec_res r = {NULL, 0, NULL, 0, 0, NULL};
	char** kp = want_key ? &r.key : NULL;
	char** vp = want_value ? &r.value : NULL;
	if (step) {
		memstored_dbm_iter_step(it, kp, &r.key_size, vp, &r.value_size);
	} else {
		memstored_dbm_iter_get(it, kp, &r.key_size, vp, &r.value_size);
	}
	r.code = memstored_get_last_status_code();
	r.msg = ms_msg(r.code);
	return r;
}

void ms_free2(void* a, void* b) {
	memstored_free(a);
	memstored_free(b);
}

// The Go callback under the C API's processor type (its pointer arguments
// are not const in cgo's export).
static const char* ms_go_proc(void* arg, const char* k, int32_t ks, const char* v,
		int32_t vs, int32_t* out) {
	return msGoRecordProc(arg, (char*)k, ks, (char*)v, vs, out);
}

ms_res ms_process_multi(MemstoredDBM* d, const char* buf, const int32_t* sizes,
		const uintptr_t* handles, int32_t n, bool writable) {
	MemstoredKeyProcPair* pairs = malloc(sizeof(*pairs) * (n > 0 ? n : 1));
	const char* p = buf ? buf : "";
	for (int32_t i = 0; pairs && i < n; i++) {
		pairs[i].key_ptr = p;
		pairs[i].key_size = sizes[i];
		pairs[i].proc_ = ms_go_proc;
		pairs[i].proc_arg = (void*)handles[i];
		p += sizes[i];
	}
	bool ok = pairs && memstored_dbm_process_multi(d, pairs, n, writable);
	ms_res r = ms_status(ok);
	free(pairs);
	return r;
}

ms_res ms_process_first(MemstoredDBM* d, uintptr_t handle, bool writable) {
	return ms_status(memstored_dbm_process_first(d, ms_go_proc, (void*)handle, writable));
}

ms_res ms_process_each(MemstoredDBM* d, uintptr_t handle, bool writable) {
	return ms_status(memstored_dbm_process_each(d, ms_go_proc, (void*)handle, writable));
}

ms_res ms_copy_file_data(MemstoredDBM* d, const char* dest, bool hard) {
	return ms_status(memstored_dbm_copy_file_data(d, dest, hard));
}

ms_res ms_restore_database(const char* old_path, const char* new_path, const char* cls,
		int64_t end_offset) {
	return ms_status(memstored_dbm_restore_database(old_path, new_path, cls, end_offset, NULL));
}

ms_res ms_get_timestamp(MemstoredDBM* d, double* out) {
	*out = memstored_dbm_get_timestamp(d);
	return ms_status(*out == *out);  // NaN on failure
}

static const char* ms_cas_arg(const char* p, bool has, bool any) {
	return any ? MEMSTORED_ANY_DATA : ms_opt(p, has);
}

ms_res ms_cas_and_get(MemstoredDBM* d, const char* k, int32_t ks, const char* e, int32_t es,
		bool has_e, bool any_e, const char* v, int32_t vs, bool has_v, bool any_v) {
	int32_t size = 0;
	char* old = memstored_dbm_compare_exchange_and_get(d, k, ks, ms_cas_arg(e, has_e, any_e),
		es, ms_cas_arg(v, has_v, any_v), vs, &size);
	return ms_bytes(old, size);
}
