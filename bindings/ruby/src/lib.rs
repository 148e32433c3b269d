//! memstored for Ruby: the engine behind tkrzw-ruby's API (`Memstored::DBM`,
//! `Iterator`, `Status`, `StatusException`), so programs written for
//! tkrzw-ruby switch by requiring "memstored" and naming `Memstored`.
//!
//! The classes are defined here with their fast paths; lib/memstored.rb
//! loads this extension and adds what is plain Ruby (Status, the open
//! parameters, `each`, operators). Tiny calls keep the GVL (taking it back
//! costs more than the call); long ones release it (`gvl::without`).

mod convert;
mod dbm;
mod file;
mod gvl;
mod index;
mod iter;
mod tkrzw;

use magnus::{function, method, prelude::*, Error, Ruby};

/// Named after the file cargo builds (libmemstored_ruby.so), so that Ruby
/// loads it where it lies, without a copy or rename.
#[magnus::init(name = "libmemstored_ruby")]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let module = ruby.define_module("Memstored")?;
    // Utility::VERSION (lib/memstored/utility.rb).
    module.const_set("NATIVE_VERSION", env!("CARGO_PKG_VERSION"))?;
    convert::init(ruby, module)?;

    let dbm = module.define_class("DBM", ruby.class_object())?;
    dbm.define_alloc_func::<dbm::Dbm>();
    dbm.define_method("open_native", method!(dbm::Dbm::open_native, 4))?;
    dbm.define_method("close", method!(dbm::Dbm::close, 0))?;
    dbm.define_method("open?", method!(dbm::Dbm::is_open, 0))?;
    dbm.define_method("get", method!(dbm::Dbm::get, -1))?;
    dbm.define_method("get_multi_native", method!(dbm::Dbm::get_multi_native, 1))?;
    dbm.define_method("set", method!(dbm::Dbm::set, -1))?;
    dbm.define_method("set_multi_native", method!(dbm::Dbm::set_multi_native, 2))?;
    dbm.define_method("set_and_get", method!(dbm::Dbm::set_and_get, -1))?;
    dbm.define_method("remove", method!(dbm::Dbm::remove, 1))?;
    dbm.define_method(
        "remove_multi_native",
        method!(dbm::Dbm::remove_multi_native, 1),
    )?;
    dbm.define_method("remove_and_get", method!(dbm::Dbm::remove_and_get, 1))?;
    dbm.define_method("append", method!(dbm::Dbm::append, -1))?;
    // compare_exchange itself is Ruby's (lib/memstored/dbm_process.rb), for ANY_DATA.
    dbm.define_method(
        "compare_exchange_native",
        method!(dbm::Dbm::compare_exchange, 3),
    )?;
    dbm.define_method("increment", method!(dbm::Dbm::increment, -1))?;
    dbm.define_method(
        "compare_exchange_multi_native",
        method!(dbm::Dbm::compare_exchange_multi_native, 2),
    )?;
    dbm.define_method("count", method!(dbm::Dbm::count, 0))?;
    dbm.define_method("clear", method!(dbm::Dbm::clear, 0))?;
    dbm.define_method("rebuild_native", method!(dbm::Dbm::rebuild_native, 0))?;
    dbm.define_method(
        "should_be_rebuilt?",
        method!(dbm::Dbm::should_be_rebuilt, 0),
    )?;
    dbm.define_method(
        "synchronize_native",
        method!(dbm::Dbm::synchronize_native, 1),
    )?;
    dbm.define_method("inspect_details", method!(dbm::Dbm::inspect_details, 0))?;
    dbm.define_method("writable?", method!(dbm::Dbm::is_writable, 0))?;
    dbm.define_method("ordered?", method!(dbm::Dbm::is_ordered, 0))?;
    dbm.define_method("search", method!(dbm::Dbm::search, -1))?;
    dbm.define_singleton_method("restore_native", function!(dbm::restore, 4))?;
    dbm.define_method(
        "compare_exchange_and_get_native",
        method!(tkrzw::compare_exchange_and_get, -1),
    )?;
    dbm.define_method("rekey_native", method!(tkrzw::rekey, 4))?;
    dbm.define_method("push_last_native", method!(tkrzw::push_last, 3))?;
    dbm.define_method("pop_first_native", method!(tkrzw::pop_first, 1))?;
    dbm.define_method("copy_file_data_native", method!(tkrzw::copy_file_data, 2))?;
    dbm.define_method("timestamp", method!(tkrzw::timestamp, 0))?;
    dbm.define_method("file_path", method!(tkrzw::file_path, 0))?;
    dbm.define_method("file_size", method!(tkrzw::file_size, 0))?;
    dbm.define_method("healthy?", method!(tkrzw::is_healthy, 0))?;
    dbm.define_method(
        "export_to_flat_records_native",
        method!(file::export_flat, 1),
    )?;
    dbm.define_method(
        "import_from_flat_records_native",
        method!(file::import_flat, 1),
    )?;
    dbm.define_method(
        "export_keys_as_lines_native",
        method!(file::export_lines, 1),
    )?;

    let f = module.define_class("File", ruby.class_object())?;
    f.define_alloc_func::<file::RbFile>();
    f.define_method("open_native", method!(file::RbFile::open, 3))?;
    f.define_method("close_native", method!(file::RbFile::close, 0))?;
    f.define_method("read_native", method!(file::RbFile::read, 2))?;
    f.define_method("write_native", method!(file::RbFile::write, 2))?;
    f.define_method("append_native", method!(file::RbFile::append, 1))?;
    f.define_method("truncate_native", method!(file::RbFile::truncate, 1))?;
    f.define_method("synchronize_native", method!(file::RbFile::synchronize, 1))?;
    f.define_method("get_size", method!(file::RbFile::size, 0))?;
    f.define_method("get_path", method!(file::RbFile::path, 0))?;
    f.define_method("search_native", method!(file::RbFile::search, 3))?;

    let index = module.define_class("Index", ruby.class_object())?;
    index.define_alloc_func::<index::RbIndex>();
    index.define_method("open_native", method!(index::RbIndex::open, 3))?;
    index.define_method("close", method!(index::RbIndex::close, 0))?;
    index.define_method("include?", method!(index::RbIndex::contains, 2))?;
    index.define_method("get_values_native", method!(index::RbIndex::get_values, 2))?;
    index.define_method("add", method!(index::RbIndex::add, 2))?;
    index.define_method("remove", method!(index::RbIndex::remove, 2))?;
    index.define_method("count", method!(index::RbIndex::count, 0))?;
    index.define_method("file_path", method!(index::RbIndex::file_path, 0))?;
    index.define_method("clear", method!(index::RbIndex::clear, 0))?;
    index.define_method("rebuild", method!(index::RbIndex::rebuild, 0))?;
    index.define_method("synchronize", method!(index::RbIndex::synchronize, 1))?;
    index.define_method("open?", method!(index::RbIndex::is_open, 0))?;
    index.define_method("writable?", method!(index::RbIndex::is_writable, 0))?;

    let index_iter = module.define_class("IndexIterator", ruby.class_object())?;
    index_iter.define_alloc_func::<index::RbIndexIter>();
    index_iter.define_private_method(
        "initialize_native",
        method!(index::RbIndexIter::initialize, 1),
    )?;
    index_iter.define_method("destruct", method!(index::RbIndexIter::destruct, 0))?;
    index_iter.define_method("first", method!(index::RbIndexIter::first, 0))?;
    index_iter.define_method("last", method!(index::RbIndexIter::last, 0))?;
    index_iter.define_method("next", method!(index::RbIndexIter::next, 0))?;
    index_iter.define_method("previous", method!(index::RbIndexIter::previous, 0))?;
    index_iter.define_method("jump_native", method!(index::RbIndexIter::jump, 2))?;
    index_iter.define_method("get_native", method!(index::RbIndexIter::get, 0))?;

    let iter = module.define_class("Iterator", ruby.class_object())?;
    iter.define_alloc_func::<iter::Iter>();
    iter.define_method("initialize", method!(iter::Iter::initialize, 1))?;
    iter.define_method("destruct", method!(iter::Iter::destruct, 0))?;
    iter.define_method("first", method!(iter::Iter::first, 0))?;
    iter.define_method("last", method!(iter::Iter::last, 0))?;
    iter.define_method("jump", method!(iter::Iter::jump, 1))?;
    iter.define_method("jump_lower", method!(iter::Iter::jump_lower, -1))?;
    iter.define_method("jump_upper", method!(iter::Iter::jump_upper, -1))?;
    iter.define_method("next", method!(iter::Iter::next, 0))?;
    iter.define_method("previous", method!(iter::Iter::previous, 0))?;
    iter.define_method("get", method!(iter::Iter::get, -1))?;
    iter.define_method("get_key", method!(iter::Iter::get_key, -1))?;
    iter.define_method("get_value", method!(iter::Iter::get_value, -1))?;
    iter.define_method("set", method!(iter::Iter::set, 1))?;
    iter.define_method("remove", method!(iter::Iter::remove, 0))?;
    iter.define_method("step", method!(iter::Iter::step, -1))?;
    Ok(())
}
