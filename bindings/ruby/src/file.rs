//! `Memstored::File`: Tkrzw's File class over the engine's file layer
//! (memstored_engine::File), and the DBM calls that write or read one
//! (flat records, keys as lines). lib/memstored/file.rb gives the methods
//! tkrzw-ruby's signatures; these `*_native` ones answer Statuses.

use crate::convert::{self, owned, status};
use crate::dbm::Dbm;
use crate::gvl;
use magnus::{Error, RArray, RString, Ruby, Value};
use memstored_c::status::{Failure, Outcome};
use memstored_engine::{File, FileOptions};

type Res<T> = Result<T, Error>;

#[derive(Default)]
#[magnus::wrap(class = "Memstored::File", free_immediately, size)]
pub struct RbFile {
    file: File,
}

impl RbFile {
    /// open_native(path, writable, [[name, value], ...]) -> Status.
    pub fn open(
        ruby: &Ruby,
        rb_self: &Self,
        path: String,
        writable: bool,
        params: Vec<(String, String)>,
    ) -> Res<Value> {
        let result: Outcome<()> = gvl::without(|| {
            let opts = FileOptions::from_params(params.iter().map(|(k, v)| (&k[..], &v[..])))?;
            Ok(rb_self.file.open(&path, writable, opts)?)
        });
        status(ruby, result)
    }

    pub fn close(ruby: &Ruby, rb_self: &Self) -> Res<Value> {
        status(
            ruby,
            gvl::without(|| rb_self.file.close()).map_err(Failure::from),
        )
    }

    /// read_native(offset, size) -> [Status, bytes or nil].
    pub fn read(
        ruby: &Ruby,
        rb_self: &Self,
        offset: u64,
        size: usize,
    ) -> Res<(Value, Option<RString>)> {
        match gvl::without(|| rb_self.file.read(offset, size)) {
            Ok(data) => Ok((status(ruby, Ok(()))?, Some(ruby.str_from_slice(&data)))),
            Err(e) => Ok((status(ruby, Err(e.into()))?, None)),
        }
    }

    pub fn write(ruby: &Ruby, rb_self: &Self, offset: u64, data: Value) -> Res<Value> {
        let data = owned(data)?;
        let result = gvl::without(|| rb_self.file.write(offset, &data));
        status(ruby, result.map_err(Failure::from))
    }

    /// append_native(data) -> [Status, the offset written at or nil].
    pub fn append(ruby: &Ruby, rb_self: &Self, data: Value) -> Res<(Value, Option<u64>)> {
        let data = owned(data)?;
        match gvl::without(|| rb_self.file.append(&data)) {
            Ok(at) => Ok((status(ruby, Ok(()))?, Some(at))),
            Err(e) => Ok((status(ruby, Err(e.into()))?, None)),
        }
    }

    pub fn truncate(ruby: &Ruby, rb_self: &Self, size: u64) -> Res<Value> {
        let result = gvl::without(|| rb_self.file.truncate(size));
        status(ruby, result.map_err(Failure::from))
    }

    pub fn synchronize(ruby: &Ruby, rb_self: &Self, hard: bool) -> Res<Value> {
        let result = gvl::without(|| rb_self.file.synchronize(hard));
        status(ruby, result.map_err(Failure::from))
    }

    /// The size in bytes; nil when not open.
    pub fn size(&self) -> Option<u64> {
        self.file.size().ok()
    }

    /// The path it was opened with; nil when not open.
    pub fn path(&self) -> Option<String> {
        self.file.path().ok()
    }

    /// search_native(mode, pattern, capacity) -> the matching lines; raises
    /// StatusException for an unknown mode or a closed file.
    pub fn search(
        ruby: &Ruby,
        rb_self: &Self,
        mode: String,
        pattern: Value,
        capacity: usize,
    ) -> Res<RArray> {
        let pattern = owned(pattern)?;
        convert::search_results(ruby, &mode, None, |mode| {
            rb_self.file.search(mode, &pattern, capacity)
        })
    }
}

/// DBM#export_to_flat_records_native(file) -> Status.
pub fn export_flat(ruby: &Ruby, dbm: &Dbm, file: &RbFile) -> Res<Value> {
    let open = dbm.open(ruby)?;
    let result = gvl::without(|| open.db.export_to_flat_records(&file.file));
    status(ruby, result.map_err(Failure::from))
}

/// DBM#import_from_flat_records_native(file) -> Status.
pub fn import_flat(ruby: &Ruby, dbm: &Dbm, file: &RbFile) -> Res<Value> {
    let open = dbm.open(ruby)?;
    let result = gvl::without(|| open.db.import_from_flat_records(&file.file));
    status(ruby, result.map_err(Failure::from))
}

/// DBM#export_keys_as_lines_native(file) -> Status.
pub fn export_lines(ruby: &Ruby, dbm: &Dbm, file: &RbFile) -> Res<Value> {
    let open = dbm.open(ruby)?;
    let result = gvl::without(|| open.db.export_keys_as_lines(&file.file));
    status(ruby, result.map_err(Failure::from))
}
