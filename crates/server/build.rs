//! Generates the gRPC service of Tkrzw-RPC (`proto/tkrzw_rpc.proto`, the
//! project's own description of `tkrzw_rpc.DBMService`) with protox, a
//! protobuf compiler in Rust, so building the server needs no `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/tkrzw_rpc.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure()
        // The client is the replica's (`--repl_master`): it reads a master's
        // Replicate stream.
        .build_client(true)
        // Keys and values as `Bytes`: a request's key goes to a command
        // without a copy, and a found value back into the reply the same way.
        .bytes(".")
        .compile_fds(descriptors)?;
    Ok(())
}
