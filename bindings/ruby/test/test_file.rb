# frozen_string_literal: true

require_relative "helper"

# Memstored::File and the DBM calls that read or write files: flat records,
# keys as lines, copy_file_data, restore_database, export.
class TestFile < Minitest::Test
  include DBMTest

  def path(name)
    ::File.join(@dir, name)
  end

  def test_file_reads_writes_appends_and_pads
    file = Memstored::File.new
    assert file.open(path("f.txt"), true, truncate: true, block_size: 512, access_options: "padding").ok?
    assert_equal Status::PRECONDITION_ERROR, file.open(path("f.txt"), true).code
    assert file.write(5, "12345").ok?
    assert file.write(0, "ABCDE").ok?
    assert_equal 10, file.append("FGH")
    assert_equal 13, file.get_size
    assert_equal path("f.txt"), file.get_path
    assert file.synchronize(true).ok?
    assert file.truncate(12).ok?
    assert_equal "DE123", file.read(3, 5)
    status = Status.new
    assert_nil file.read(10, 5, status)
    assert_equal Status::INFEASIBLE_ERROR, status.code
    assert_includes file.inspect, "Memstored::File"
    assert file.close.ok?
    assert_equal 512, ::File.size(path("f.txt"))
    assert file.open(path("f.txt"), false).ok?
    assert_equal Status::PRECONDITION_ERROR, file.write(0, "x").code
    assert_nil file.append("x", status)
    assert_equal Status::PRECONDITION_ERROR, status.code
    file.destruct
    assert_equal Status::PRECONDITION_ERROR, file.close.code
    assert_equal Status::SYSTEM_ERROR, file.open(path("no/such/f"), false).code
  end

  def test_file_search_modes
    file = Memstored::File.new
    file.open(path("lines.txt"), true).or_die
    file.append("apple\nbanana\napricot\ncherry\n")
    assert_equal %w[apple apricot], file.search("begin", "ap")
    assert_equal %w[banana], file.search("contain", "nan")
    assert_equal %w[apple], file.search("end", "le")
    assert_equal %w[cherry], file.search("regex", "r+y$")
    assert_equal %w[apple], file.search("edit", "appel", 1)
    assert_equal 1, file.search("contain", "a", 1).size
    e = assert_raises(StatusException) { file.search("nosuchmode", "x") }
    assert_equal Status::INVALID_ARGUMENT_ERROR, e.status.code
  end

  # Tkrzw's FlatRecord: 0xFF, the size as a base-128 number, the bytes; key then value.
  def test_flat_records_are_tkrzws_format
    dbm = open_db("tkt")
    dbm["k"] = "v" * 200
    file = Memstored::File.new
    file.open(path("flat"), true, truncate: true).or_die
    file.append("stale bytes")
    assert dbm.export_to_flat_records(file).ok?
    expected = "\xff\x01k".b + "\xff\x81\x48".b + ("v" * 200)
    assert_equal expected, file.read(0, file.get_size)
    dbm.clear.or_die
    assert dbm.import_from_flat_records(file).ok?
    assert_equal "v" * 200, dbm["k"]
    file.truncate(0)
    file.append("\xff\x01k".b)
    assert_equal Status::BROKEN_DATA_ERROR, dbm.import_from_flat_records(file).code
    file.append("\x01".b)
    assert_equal Status::BROKEN_DATA_ERROR, dbm.import_from_flat_records(file).code
    assert_equal Status::INVALID_ARGUMENT_ERROR, dbm.export_to_flat_records("path").code
    file.close.or_die
    assert_equal Status::PRECONDITION_ERROR, dbm.import_from_flat_records(file).code
  end

  def test_export_keys_as_lines_and_to_another_dbm
    dbm = open_db("tkt")
    %w[b a].each { |k| dbm[k] = k.upcase }
    file = Memstored::File.new
    file.open(path("keys.txt"), true).or_die
    assert dbm.export_keys_as_lines(file).ok?
    assert_equal "a\nb\n", file.read(0, file.get_size)
    other = DBM.new
    other.open("", true).or_die
    assert dbm.export(other).ok?
    assert_equal({ "a" => "A", "b" => "B" }, other.each.to_h)
    assert_equal Status::INVALID_ARGUMENT_ERROR, dbm.export("not a dbm").code
  end

  def test_file_facts_copy_and_restore
    dbm = open_db("tkh", num_shards: 2)
    dbm["k"] = "v"
    dbm.synchronize(false).or_die
    assert_operator dbm.file_size, :>, 0
    assert_equal path("casket.tkh"), dbm.file_path
    assert_in_delta Time.now.to_f, dbm.timestamp, 60
    before = dbm.timestamp
    dbm.synchronize(false).or_die
    assert_operator dbm.timestamp, :>=, before
    assert dbm.healthy?
    assert dbm.copy_file_data(path("copy.tkh")).ok?
    assert ::File.exist?(path("copy.tkh-00001-of-00002"))
    copy = DBM.new
    copy.open(path("copy.tkh"), false, num_shards: 2).or_die
    assert_equal "v", copy["k"]
    copy.close.or_die
    # Tkrzw's suite names the restored file "casket-copy.tkh-restored": the class tells.
    assert DBM.restore_database(path("copy.tkh"), path("copy.tkh-restored"), "HashDBM", -1).ok?
    assert_equal Status::NOT_IMPLEMENTED_ERROR, DBM.restore_database(path("copy.tkh"), path("r2.tkh"), "", 100).code
    assert_equal Status::NOT_IMPLEMENTED_ERROR, DBM.restore_database(path("copy.tkh"), path("r2.tkh"), "", -1, "key").code
    restored = DBM.new
    restored.open(path("copy.tkh-restored"), false, num_shards: 0, dbm: "HashDBM").or_die
    assert_equal "v", restored["k"]
    mem = DBM.new
    mem.open("", true).or_die
    assert_nil mem.file_path
    assert_equal 0, mem.file_size
    saved = open_db("tiny")
    saved["k"] = "v"
    saved.synchronize(false).or_die
    assert_operator saved.file_size, :>, 0
  end
end
