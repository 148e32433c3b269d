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

#endif
