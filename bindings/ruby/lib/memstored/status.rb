# frozen_string_literal: true

module Memstored
  # The result of an operation: a code (tkrzw's numbering) and a message.
  # Methods that change the database return one; `or_die` turns a failure
  # into a StatusException.
  class Status
    # Success.
    SUCCESS = 0
    # Generic error whose cause is unknown.
    UNKNOWN_ERROR = 1
    # Generic error from the operating system.
    SYSTEM_ERROR = 2
    # The feature is not implemented (e.g. `last` on a hash database).
    NOT_IMPLEMENTED_ERROR = 3
    # A precondition is not met (e.g. writing to a read-only database).
    PRECONDITION_ERROR = 4
    # A given argument is invalid.
    INVALID_ARGUMENT_ERROR = 5
    # The operation was canceled.
    CANCELED_ERROR = 6
    # The record does not exist.
    NOT_FOUND_ERROR = 7
    # The operation is not permitted.
    PERMISSION_ERROR = 8
    # The operation is infeasible (e.g. a compare-exchange whose expectation failed).
    INFEASIBLE_ERROR = 9
    # The record exists already (a set without overwrite).
    DUPLICATION_ERROR = 10
    # Data on disk failed its checks.
    BROKEN_DATA_ERROR = 11
    # Networking failed.
    NETWORK_ERROR = 12
    # Generic error caused by the application logic.
    APPLICATION_ERROR = 13

    # Names by code, as tkrzw spells them (the C library's
    # memstored_status_code_name agrees; the tests check it).
    NAMES = %w[SUCCESS UNKNOWN_ERROR SYSTEM_ERROR NOT_IMPLEMENTED_ERROR PRECONDITION_ERROR
               INVALID_ARGUMENT_ERROR CANCELED_ERROR NOT_FOUND_ERROR PERMISSION_ERROR
               INFEASIBLE_ERROR DUPLICATION_ERROR BROKEN_DATA_ERROR NETWORK_ERROR
               APPLICATION_ERROR].freeze

    # The name of a code, e.g. "NOT_FOUND_ERROR"; "unknown" for other numbers.
    def self.code_name(code)
      (code.is_a?(Integer) && code >= 0 && NAMES[code]) || "unknown"
    end

    attr_reader :code, :message

    def initialize(code = SUCCESS, message = "")
      @code = code
      @message = message
    end

    # Replaces the code and the message.
    def set(code = SUCCESS, message = "")
      @code = code
      @message = message
      self
    end

    # Takes the other status's state when this one is a success (keeps the first failure).
    def join(rhs)
      set(rhs.code, rhs.message) if @code == SUCCESS
      self
    end

    def ok?
      @code == SUCCESS
    end

    # Raises a StatusException carrying this status unless it is a success.
    def or_die
      raise StatusException, self unless @code == SUCCESS

      nil
    end

    # "NAME" or "NAME: message".
    def to_s
      name = Status.code_name(@code)
      @message.empty? ? name : "#{name}: #{@message}"
    end

    def to_i
      @code
    end

    def inspect
      "#<Memstored::Status:#{self}>"
    end

    # Equal to a Status or an Integer with the same code.
    def ==(other)
      case other
      when Status then @code == other.code
      when Integer then @code == other
      else false
      end
    end

    def !=(other)
      !(self == other)
    end

    alias eql? ==

    def hash
      @code.hash
    end
  end

  # Raised by Status#or_die (and by calls on a database that is not open).
  class StatusException < RuntimeError
    attr_reader :status

    def initialize(status)
      @status = status.is_a?(Status) ? status : Status.new(Status::UNKNOWN_ERROR, status.to_s)
      super(@status.to_s)
    end

    def to_s
      @status.to_s
    end

    def inspect
      "#<Memstored::StatusException:#{@status}>"
    end
  end
end
