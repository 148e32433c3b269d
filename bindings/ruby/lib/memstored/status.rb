# frozen_string_literal: true

module Memstored
  # The result of an operation: a code (tkrzw's numbering) and a message.
  # Methods that change the database return one; `or_die` turns a failure
  # into a StatusException.
  class Status
    # Tkrzw's codes, SUCCESS = 0 to APPLICATION_ERROR = 13, are set by the
    # extension from the engine's table (memstored_engine::status::code,
    # where each is described), as are NAMES, the names by code.

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
