# Script mode: install, configure + build the consumer, run it; any failure fails the test.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
run(${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${CONSUMER_BUILD} -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
run(${CONSUMER_BUILD}/consumer)
# The installed kcca_score finds LibTorch for --features encoder: a missing checkpoint is then the
# error.
if(WITH_TORCH)
  execute_process(COMMAND ${PREFIX}/bin/kcca_score --features encoder --checkpoint
                          ${PREFIX}/no-such-checkpoint.pt --samples 30 --draws 2
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "no-such-checkpoint.pt: cannot open the file")
    message(FATAL_ERROR "installed kcca_score --features encoder: exit ${rc}: ${err}")
  endif()
endif()
