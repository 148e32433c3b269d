// C helpers of the Go binding: each runs one memstored call and reads the
// thread-local last status in the same C call (see native.go).
#ifndef MS_HELPERS_H
#define MS_HELPERS_H

#include "memstored.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct {
	char* ptr;
	int32_t size;
	int32_t code;
	char* msg;
} ms_res;

typedef struct {
	char* key;
	int32_t key_size;
	char* value;
	int32_t value_size;
	int32_t code;
	char* msg;
} ms_rec_res;

// The moves, by number, so that one helper serves them all.
enum { MS_FIRST, MS_LAST, MS_NEXT, MS_PREVIOUS, MS_REMOVE, MS_JUMP, MS_JUMP_LOWER,
	MS_JUMP_UPPER, MS_SET };

// The status of the call just made; `ok` false with a success status: a
// helper's own failure (its malloc).
ms_res ms_status_of(bool ok);

ms_res ms_open(const char* path, bool writable, const char* params, MemstoredDBM** out);
ms_res ms_close(MemstoredDBM* d);
ms_res ms_get(MemstoredDBM* d, const char* k, int32_t ks);
ms_res ms_get_to(MemstoredDBM* d, const char* k, int32_t ks, char* buf, int32_t cap);
ms_res ms_set(MemstoredDBM* d, const char* k, int32_t ks, const char* v, int32_t vs,
		bool overwrite);
ms_res ms_set_and_get(MemstoredDBM* d, const char* k, int32_t ks, const char* v,
		int32_t vs, bool overwrite);
ms_res ms_remove(MemstoredDBM* d, const char* k, int32_t ks);
ms_res ms_remove_and_get(MemstoredDBM* d, const char* k, int32_t ks);
ms_res ms_append(MemstoredDBM* d, const char* k, int32_t ks, const char* v, int32_t vs,
		const char* delim, int32_t ds);
ms_res ms_compare_exchange(MemstoredDBM* d, const char* k, int32_t ks,
		const char* e, int32_t es, bool has_e, const char* v, int32_t vs, bool has_v);
ms_res ms_increment(MemstoredDBM* d, const char* k, int32_t ks, int64_t inc,
		int64_t init, int64_t* out);
ms_res ms_compare_exchange_multi(MemstoredDBM* d, const char* ebuf,
		const int32_t* esizes, int32_t ne, const char* dbuf, const int32_t* dsizes, int32_t nd);
ms_res ms_get_multi(MemstoredDBM* d, const char* buf, const int32_t* sizes, int32_t n);
ms_res ms_set_multi(MemstoredDBM* d, const char* buf, const int32_t* sizes, int32_t n,
		bool overwrite);
ms_res ms_remove_multi(MemstoredDBM* d, const char* buf, const int32_t* sizes, int32_t n);
ms_res ms_count(MemstoredDBM* d, int64_t* out);
ms_res ms_clear(MemstoredDBM* d);
ms_res ms_rebuild(MemstoredDBM* d, const char* params);
ms_res ms_should_be_rebuilt(MemstoredDBM* d, bool* out);
ms_res ms_synchronize(MemstoredDBM* d, bool hard, const char* params);
ms_res ms_search(MemstoredDBM* d, const char* mode, const char* p, int32_t ps,
		int32_t capacity);
ms_res ms_inspect(MemstoredDBM* d);
ms_res ms_make_iterator(MemstoredDBM* d, MemstoredDBMIter** out);
ms_res ms_iter_move(MemstoredDBMIter* it, int op, const char* k, int32_t ks,
		bool inclusive);
ms_rec_res ms_iter_get(MemstoredDBMIter* it, bool step, bool want_key, bool want_value);
void ms_free2(void* a, void* b);


// Record processors (processor.go): the Go callback, and the calls that run
// it. `handles` are runtime/cgo handles, one a key (one for process_first
// and process_each), handed to the callback as its argument.
char* msGoRecordProc(void* arg, char* key, int32_t key_size, char* value,
		int32_t value_size, int32_t* out_size);
ms_res ms_process_multi(MemstoredDBM* d, const char* buf, const int32_t* sizes,
		const uintptr_t* handles, int32_t n, bool writable);
ms_res ms_process_first(MemstoredDBM* d, uintptr_t handle, bool writable);
ms_res ms_process_each(MemstoredDBM* d, uintptr_t handle, bool writable);

// File-level calls and the compare-exchange with Tkrzw's "any" value
// (has_e/has_v false: NULL; any_e/any_v: MEMSTORED_ANY_DATA).
ms_res ms_copy_file_data(MemstoredDBM* d, const char* dest, bool hard);
ms_res ms_restore_database(const char* old_path, const char* new_path, const char* cls,
		int64_t end_offset);
ms_res ms_get_timestamp(MemstoredDBM* d, double* out);
ms_res ms_cas_and_get(MemstoredDBM* d, const char* k, int32_t ks, const char* e, int32_t es,
		bool has_e, bool any_e, const char* v, int32_t vs, bool has_v, bool any_v);
ms_res ms_get_file_size(MemstoredDBM* d, int64_t* out);
ms_res ms_export(MemstoredDBM* d, MemstoredDBM* dest);
ms_res ms_flat_records(MemstoredDBM* d, MemstoredFile* f, int op);
enum { MS_EXPORT_FLAT, MS_IMPORT_FLAT, MS_EXPORT_KEYS };

// Tkrzw's File (file.go) over memstored_file_*. Strings come back as ms_res
// ptr/size (released with memstored_free); a search's lines as an array of
// MemstoredStr, size their number.
ms_res ms_file_open(const char* path, bool writable, const char* params, MemstoredFile** out);
ms_res ms_file_close(MemstoredFile* f);
ms_res ms_file_read(MemstoredFile* f, int64_t off, char* buf, int64_t size);
ms_res ms_file_write(MemstoredFile* f, int64_t off, const char* buf, int64_t size);
ms_res ms_file_append(MemstoredFile* f, const char* buf, int64_t size, int64_t* off);
ms_res ms_file_truncate(MemstoredFile* f, int64_t size);
ms_res ms_file_synchronize(MemstoredFile* f, bool hard);
ms_res ms_file_get_size(MemstoredFile* f, int64_t* out);
ms_res ms_file_get_path(MemstoredFile* f);
ms_res ms_file_search(MemstoredFile* f, const char* mode, const char* p, int32_t ps,
		int32_t capacity);

// Tkrzw's Index (index.go) over memstored_index_*; the pair calls by number.
enum { MS_INDEX_CHECK, MS_INDEX_ADD, MS_INDEX_REMOVE };
enum { MS_INDEX_CLEAR, MS_INDEX_REBUILD, MS_INDEX_SYNC, MS_INDEX_SYNC_HARD };
ms_res ms_index_open(const char* path, bool writable, const char* params, MemstoredIndex** out);
ms_res ms_index_close(MemstoredIndex* x);
ms_res ms_index_pair(MemstoredIndex* x, int op, const char* k, int32_t ks, const char* v,
		int32_t vs, bool* out);
ms_res ms_index_get_values(MemstoredIndex* x, const char* k, int32_t ks, int32_t max);
ms_res ms_index_count(MemstoredIndex* x, int32_t* out);
ms_res ms_index_get_file_path(MemstoredIndex* x);
ms_res ms_index_do(MemstoredIndex* x, int op);
ms_res ms_index_is_writable(MemstoredIndex* x, bool* out);
ms_res ms_index_make_iterator(MemstoredIndex* x, MemstoredIndexIter** out);
ms_res ms_index_iter_move(MemstoredIndexIter* it, int op, const char* k, int32_t ks,
		const char* v, int32_t vs);
ms_rec_res ms_index_iter_get(MemstoredIndexIter* it);

#endif
