# frozen_string_literal: true

require "etc"
require "rbconfig"

module Memstored
  # tkrzw-ruby's Utility: the library's constants and a few helpers. Written
  # in Ruby: none of it is on a hot path, and the hash functions give the
  # same numbers as Tkrzw's (a program may store them).
  class Utility
    # The extension's version, "MAJOR.MINOR.PATCH".
    VERSION = Memstored::NATIVE_VERSION

    # The name Tkrzw gives the OS ("Linux", "macOS", ...).
    OS_NAME = case RbConfig::CONFIG["host_os"]
              when /linux/ then "Linux"
              when /darwin/ then "macOS"
              when /freebsd/ then "FreeBSD"
              when /mswin|mingw|cygwin/ then "Windows"
              else RbConfig::CONFIG["host_os"].to_s
              end

    PAGE_SIZE = Etc.sysconf(Etc::SC_PAGESIZE) || 4096
    INT32MIN = -(2**31)
    INT32MAX = 2**31 - 1
    UINT32MAX = 2**32 - 1
    INT64MIN = -(2**63)
    INT64MAX = 2**63 - 1
    UINT64MAX = 2**64 - 1

    MASK64 = UINT64MAX
    private_constant :MASK64

    # Bytes of memory the machine has; -1 where /proc does not say.
    def self.get_memory_capacity
      proc_kib("/proc/meminfo", "MemTotal")
    end

    # Bytes of memory this process uses (resident); -1 where /proc does not say.
    def self.get_memory_usage
      proc_kib("/proc/self/status", "VmRSS")
    end

    def self.proc_kib(path, field)
      line = ::File.foreach(path).find { |l| l.start_with?("#{field}:") }
      line ? line.split[1].to_i * 1024 : -1
    rescue SystemCallError
      -1
    end
    private_class_method :proc_kib

    # Tkrzw's hash of a hash database's buckets (64-bit MurmurHash2 with
    # Tkrzw's seed), modulo num_buckets (0 or nil: UINT64MAX).
    def self.primary_hash(data, num_buckets = nil)
      bytes = data.to_s.b
      hash = murmur64(bytes, 19_780_211)
      bucket_hash(hash, num_buckets)
    end

    # Tkrzw's hash of a sharded database's shards (64-bit FNV with Tkrzw's
    # prime), modulo num_shards (0 or nil: UINT64MAX).
    def self.secondary_hash(data, num_shards = nil)
      hash = 14_695_981_039_346_656_037
      data.to_s.each_byte { |b| hash = ((hash ^ b) * 109_951_162_811) & MASK64 }
      bucket_hash(hash, num_shards)
    end

    # Under 2^32 buckets Tkrzw folds the halves of the hash together first.
    def self.bucket_hash(hash, num)
      num = UINT64MAX if num.nil? || num.zero?
      if num <= UINT32MAX
        high = ((hash >> 48) & 0xffff) | ((hash >> 16) & 0xffff0000)
        low = ((hash & 0xffff) << 16) | ((hash >> 16) & 0xffff)
        hash = high ^ low
      end
      hash % num
    end
    private_class_method :bucket_hash

    MURMUR_MUL = 0xc6a4a7935bd1e995
    private_constant :MURMUR_MUL

    def self.murmur64(bytes, seed)
      hash = (seed ^ (bytes.bytesize * MURMUR_MUL)) & MASK64
      whole = bytes.bytesize / 8 * 8
      bytes.byteslice(0, whole).unpack("Q<*").each do |num|
        num = (num * MURMUR_MUL) & MASK64
        num ^= num >> 47
        num = (num * MURMUR_MUL) & MASK64
        hash = ((hash * MURMUR_MUL) & MASK64) ^ num
      end
      tail = bytes.byteslice(whole, 8).bytes
      unless tail.empty?
        tail.each_with_index { |b, i| hash ^= b << (8 * i) }
        hash = (hash * MURMUR_MUL) & MASK64
      end
      hash ^= hash >> 47
      hash = (hash * MURMUR_MUL) & MASK64
      hash ^ (hash >> 47)
    end
    private_class_method :murmur64

    # Levenshtein distance between two strings: of bytes, or with utf true
    # of UTF-8 characters.
    def self.edit_distance_lev(stra, strb, utf = false)
      a = utf ? stra.to_s.dup.force_encoding(Encoding::UTF_8).chars : stra.to_s.bytes
      b = utf ? strb.to_s.dup.force_encoding(Encoding::UTF_8).chars : strb.to_s.bytes
      row = (0..b.size).to_a
      a.each_with_index do |ca, i|
        prev = row.dup
        row[0] = i + 1
        b.each_with_index do |cb, j|
          row[j + 1] = [prev[j + 1] + 1, row[j] + 1, prev[j] + (ca == cb ? 0 : 1)].min
        end
      end
      row[b.size]
    end

    # An integer as 8 bytes, big-endian (two's complement).
    def self.serialize_int(num)
      [num.to_i].pack("q>")
    end

    def self.deserialize_int(data)
      data.to_s.b.rjust(8, "\0").byteslice(-8, 8).unpack1("q>")
    end

    # A float as 8 bytes, big-endian IEEE 754.
    def self.serialize_float(num)
      [num.to_f].pack("G")
    end

    def self.deserialize_float(data)
      data.to_s.b.rjust(8, "\0").byteslice(-8, 8).unpack1("G")
    end
  end
end
