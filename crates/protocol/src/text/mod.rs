//! memcached text and meta protocols (in progress).
