//! Generates the gRPC client of Tkrzw-RPC's `tkrzw_rpc.DBMService` from the
//! server's description (crates/server/proto/tkrzw_rpc.proto) with protox,
//! so building the tool needs no `protoc`; `memstore remote --protocol grpc`
//! uses it.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = "../server/proto";
    let proto = "../server/proto/tkrzw_rpc.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], [dir])?;
    tonic_prost_build::configure()
        .build_server(false)
        .compile_fds(descriptors)?;
    Ok(())
}
