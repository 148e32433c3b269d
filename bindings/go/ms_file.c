// C helpers of the Go binding's File and Index (file.go, index.go) and of
// the DBM calls that take a File: each runs one memstored call and reads the
// thread-local last status in the same C call (see native.go).
#include "ms_helpers.h"

#include <string.h>

static ms_res ms_text(char* s) {
	ms_res r = ms_status_of(s != NULL);
	r.ptr = s;
	r.size = s ? (int32_t)strlen(s) : 0;
	return r;
}

static ms_res ms_strs_res(MemstoredStr* a, int32_t n) {
	ms_res r = ms_status_of(true);
	r.ptr = (char*)a;
	r.size = n;
	return r;
}

ms_res ms_get_file_size(MemstoredDBM* d, int64_t* out) {
	*out = memstored_dbm_get_file_size(d);
	return ms_status_of(*out >= 0);
}

ms_res ms_export(MemstoredDBM* d, MemstoredDBM* dest) {
	return ms_status_of(memstored_dbm_export(d, dest));
}

ms_res ms_flat_records(MemstoredDBM* d, MemstoredFile* f, int op) {
	bool ok = false;
	switch (op) {
		case MS_EXPORT_FLAT: ok = memstored_dbm_export_to_flat_records(d, f); break;
		case MS_IMPORT_FLAT: ok = memstored_dbm_import_from_flat_records(d, f); break;
		case MS_EXPORT_KEYS: ok = memstored_dbm_export_keys_as_lines(d, f); break;
	}
	return ms_status_of(ok);
}

ms_res ms_file_open(const char* path, bool writable, const char* params, MemstoredFile** out) {
	*out = memstored_file_open(path, writable, params);
	return ms_status_of(*out != NULL);
}

ms_res ms_file_close(MemstoredFile* f) { return ms_status_of(memstored_file_close(f)); }

ms_res ms_file_read(MemstoredFile* f, int64_t off, char* buf, int64_t size) {
	return ms_status_of(memstored_file_read(f, off, buf, (size_t)size));
}

ms_res ms_file_write(MemstoredFile* f, int64_t off, const char* buf, int64_t size) {
	return ms_status_of(memstored_file_write(f, off, buf, (size_t)size));
}

ms_res ms_file_append(MemstoredFile* f, const char* buf, int64_t size, int64_t* off) {
	return ms_status_of(memstored_file_append(f, buf, (size_t)size, off));
}

ms_res ms_file_truncate(MemstoredFile* f, int64_t size) {
	return ms_status_of(memstored_file_truncate(f, size));
}

ms_res ms_file_synchronize(MemstoredFile* f, bool hard) {
	return ms_status_of(memstored_file_synchronize(f, hard, 0, 0));
}

ms_res ms_file_get_size(MemstoredFile* f, int64_t* out) {
	*out = memstored_file_get_size(f);
	return ms_status_of(*out >= 0);
}

ms_res ms_file_get_path(MemstoredFile* f) { return ms_text(memstored_file_get_path(f)); }

ms_res ms_file_search(MemstoredFile* f, const char* mode, const char* p, int32_t ps,
		int32_t capacity) {
	int32_t num = 0;
	MemstoredStr* lines = memstored_file_search(f, mode, p ? p : "", ps, capacity, &num);
	return ms_strs_res(lines, num);
}

ms_res ms_index_open(const char* path, bool writable, const char* params, MemstoredIndex** out) {
	*out = memstored_index_open(path, writable, params);
	return ms_status_of(*out != NULL);
}

ms_res ms_index_close(MemstoredIndex* x) { return ms_status_of(memstored_index_close(x)); }

ms_res ms_index_pair(MemstoredIndex* x, int op, const char* k, int32_t ks, const char* v,
		int32_t vs, bool* out) {
	k = k ? k : "";
	v = v ? v : "";
	switch (op) {
		case MS_INDEX_CHECK: *out = memstored_index_check(x, k, ks, v, vs); break;
		case MS_INDEX_ADD: *out = memstored_index_add(x, k, ks, v, vs); break;
		case MS_INDEX_REMOVE: *out = memstored_index_remove(x, k, ks, v, vs); break;
	}
	// A check that finds no pair is not a failure.
	return ms_status_of(*out || op == MS_INDEX_CHECK);
}

ms_res ms_index_get_values(MemstoredIndex* x, const char* k, int32_t ks, int32_t max) {
	int32_t num = 0;
	MemstoredStr* values = memstored_index_get_values(x, k ? k : "", ks, max, &num);
	return ms_strs_res(values, num);
}

ms_res ms_index_count(MemstoredIndex* x, int32_t* out) {
	*out = memstored_index_count(x);
	return ms_status_of(*out >= 0);
}

ms_res ms_index_get_file_path(MemstoredIndex* x) { return ms_text(memstored_index_get_file_path(x)); }

ms_res ms_index_do(MemstoredIndex* x, int op) {
	bool ok = false;
	switch (op) {
		case MS_INDEX_CLEAR: ok = memstored_index_clear(x); break;
		case MS_INDEX_REBUILD: ok = memstored_index_rebuild(x); break;
		case MS_INDEX_SYNC: ok = memstored_index_synchronize(x, false); break;
		case MS_INDEX_SYNC_HARD: ok = memstored_index_synchronize(x, true); break;
	}
	return ms_status_of(ok);
}

ms_res ms_index_is_writable(MemstoredIndex* x, bool* out) {
	*out = memstored_index_is_writable(x);
	return ms_status_of(true);
}

ms_res ms_index_make_iterator(MemstoredIndex* x, MemstoredIndexIter** out) {
	*out = memstored_index_make_iterator(x);
	return ms_status_of(*out != NULL);
}

ms_res ms_index_iter_move(MemstoredIndexIter* it, int op, const char* k, int32_t ks,
		const char* v, int32_t vs) {
	switch (op) {
		case MS_FIRST: memstored_index_iter_first(it); break;
		case MS_LAST: memstored_index_iter_last(it); break;
		case MS_NEXT: memstored_index_iter_next(it); break;
		case MS_PREVIOUS: memstored_index_iter_previous(it); break;
		case MS_JUMP: memstored_index_iter_jump(it, k ? k : "", ks, v ? v : "", vs); break;
	}
	return ms_status_of(true);
}

ms_rec_res ms_index_iter_get(MemstoredIndexIter* it) {
	ms_rec_res r = {NULL, 0, NULL, 0, 0, NULL};
	memstored_index_iter_get(it, &r.key, &r.key_size, &r.value, &r.value_size);
	ms_res st = ms_status_of(r.key != NULL);
	r.code = st.code;
	r.msg = st.msg;
	return r;
}
