# ctest python_install: `cmake --install` into a scratch prefix, then import the installed
# package (not the build tree's) with PYTHONPATH=<prefix>/<MOCA_PYTHON_INSTALL_DIR>.
# Variables: BUILD_DIR, PREFIX, PYDIR (relative to PREFIX), PYTHON.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PREFIX}/${PYDIR} ${PYTHON} -c
  "import moca, numpy as np; assert moca.__file__.startswith('${PREFIX}'), moca.__file__; r = np.random.default_rng(0).standard_normal((40, 3)); print(moca.__version__, moca.CCA().fit(r, r[:, ::-1] + 0.01 * np.random.default_rng(1).standard_normal((40, 3))).correlations_[0] > 0.99)"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${PREFIX})
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "^[0-9.]+ True")
  message(FATAL_ERROR "the installed package does not import or compute (${rc})")
endif()
