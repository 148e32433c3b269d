//! memstored for Python: the engine behind tkrzw-python's API (`DBM`,
//! `Iterator`, `AsyncDBM`, `Future`, `File`, `Index`, `Status`,
//! `StatusException`, `Utility`), so programs written for
//! tkrzw-python switch by changing the import.

mod asyncdbm;
mod asyncops;
mod convert;
mod dbm;
mod file;
mod hash;
mod index;
mod iter;
mod ops;
mod params;
mod process;
mod status;
mod tkops;
mod utility;

use pyo3::prelude::*;

#[pymodule]
mod memstored {
    #[pymodule_export]
    use crate::asyncdbm::{AsyncDbm, Future};
    #[pymodule_export]
    use crate::dbm::Dbm;
    #[pymodule_export]
    use crate::file::File;
    #[pymodule_export]
    use crate::index::{Index, IndexIterator};
    #[pymodule_export]
    use crate::iter::DbIter;
    #[pymodule_export]
    use crate::status::{Status, StatusException};
    #[pymodule_export]
    use crate::utility::Utility;
    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        crate::status::add_codes(&m.getattr("Status")?)?;
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
