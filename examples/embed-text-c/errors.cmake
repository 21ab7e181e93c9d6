# Runs embed-text-c on bad input; each case must exit 2 with its message.
function(check message)
  if(NOT code EQUAL 2 OR NOT err MATCHES "${message}")
    message(FATAL_ERROR "embed-text-c: exit ${code}, stderr '${err}'; "
      "expected exit 2 and '${message}'")
  endif()
endfunction()
execute_process(COMMAND ${PROGRAM} ${TOKENIZER} ""
  RESULT_VARIABLE code ERROR_VARIABLE err OUTPUT_QUIET)
check("text 0 is empty")
string(ASCII 255 bad)
execute_process(COMMAND ${PROGRAM} ${TOKENIZER} "ok" "a${bad}b"
  RESULT_VARIABLE code ERROR_VARIABLE err OUTPUT_QUIET)
check("text 1 is not valid UTF-8")
execute_process(COMMAND ${PROGRAM} ${TOKENIZER}/missing.json "hi"
  RESULT_VARIABLE code ERROR_VARIABLE err OUTPUT_QUIET)
check("loading the tokenizer: .*missing.json")
execute_process(COMMAND ${PROGRAM} ${TOKENIZER}
  RESULT_VARIABLE code ERROR_VARIABLE err OUTPUT_QUIET)
check("usage: embed-text-c")
