# Runs coffer-bench on a tiny data set (seconds) and checks what it writes,
# then checks that bad arguments fail with a message naming them.
#   cmake -DBENCH=<coffer-bench> -DREPORT=<report.py> -DPYTHON=<python3 or "">
#         -DWORK_DIR=<scratch dir> -P SmokeRun.cmake

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(json "${WORK_DIR}/bench-results.json")

execute_process(
  COMMAND "${BENCH}" --n 300 --queries 50 --scans 3 --prefix-queries 20 --single-writes 20 --repeat 2
          --list-length 2500 --json "${json}" --workdir "${WORK_DIR}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "coffer-bench failed (${rc}):\n${out}\n${err}")
endif()
foreach(needle "verified against the oracle" "fastest of 2 runs" "bulk insert" "C/SQLite" "peak RSS"
               "list append, 1,000 per transaction" "list read in order")
  string(FIND "${out}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "coffer-bench's table lacks '${needle}':\n${out}")
  endif()
endforeach()
# The list operations: every engine but raw LMDB, which is left out of them.
file(READ "${json}" results)
foreach(op list_append list_read_in_order)
  foreach(engine coffer coffer_encrypted sqlite)
    string(JSON rate ERROR_VARIABLE missing GET "${results}" operations ${op} ${engine})
    if(missing)
      message(FATAL_ERROR "bench-results.json has no ${op} figure for ${engine}: ${missing}")
    endif()
  endforeach()
  string(JSON rate ERROR_VARIABLE missing GET "${results}" operations ${op} lmdb)
  if(NOT missing)
    message(FATAL_ERROR "bench-results.json has a ${op} figure for raw LMDB, which cannot do it")
  endif()
  string(JSON count GET "${results}" operation_counts ${op})
  if(NOT count EQUAL 2500)
    message(FATAL_ERROR "${op} counted ${count} links, not the 2500 of --list-length")
  endif()
endforeach()
file(GLOB leftovers "${WORK_DIR}/coffer-bench-*")
if(leftovers)
  message(FATAL_ERROR "coffer-bench left its stores behind: ${leftovers}")
endif()

if(PYTHON)
  # The JSON has the documented shape, and the chart and the figures table
  # can be made from it.
  execute_process(
    COMMAND "${PYTHON}" "${REPORT}" check "${json}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "report.py check failed (${rc}):\n${out}\n${err}")
  endif()
  execute_process(
    COMMAND "${PYTHON}" "${REPORT}" chart "${json}" "${WORK_DIR}/chart.svg"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "report.py chart failed (${rc}):\n${out}\n${err}")
  endif()
  file(READ "${WORK_DIR}/chart.svg" svg)
  string(FIND "${svg}" "</svg>" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "report.py chart wrote no complete SVG")
  endif()
endif()

# Bad arguments: exit status 2 and a message that names what was wrong.
function(expect_refusal needle)
  execute_process(COMMAND "${BENCH}" --workdir "${WORK_DIR}" ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "coffer-bench ${ARGN}: exit ${rc}, expected 2\n${out}\n${err}")
  endif()
  string(FIND "${err}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "coffer-bench ${ARGN}: the message does not name '${needle}':\n${err}")
  endif()
endfunction()
expect_refusal("--n wants a whole number from 1" --n 0)
expect_refusal("not '12x'" --n 12x)
expect_refusal("not '-5'" --scans -5)
expect_refusal("--list-length wants a whole number from 1" --list-length 0)
expect_refusal("--repeat wants a whole number from 1 to 100" --repeat 101)
expect_refusal("unknown engine 'oracle'" --engines coffer,oracle)
expect_refusal("'lmdb' is listed twice" --engines lmdb,lmdb)
expect_refusal("unknown option '--fast'" --fast yes)
expect_refusal("'--json' is not an option or is missing its value" --json)
expect_refusal("cannot create a directory in '${WORK_DIR}/missing'" --n 10 --workdir "${WORK_DIR}/missing")
