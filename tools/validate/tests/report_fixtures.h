// Hand-written doctest XML reports for the tests of the report reader and the comparison.
#pragma once

namespace validate_fixtures {

inline constexpr const char* kMixedReport = R"(<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="conformance-example">
  <Options order_by="file" rand_seed="0" first="0" last="4294967295" abort_after="0" subcase_filter_levels="2147483647" case_sensitive="false" no_throw="false" no_skip="false"/>
  <TestSuite>
    <TestCase name="passes" filename="example_test.cpp" line="10">
      <OverallResultsAsserts successes="2" failures="0" test_case_success="true"/>
    </TestCase>
    <TestCase name="a failing check" filename="device_properties_test.cpp" line="90">
      <Expression success="false" type="CHECK" filename="../../work/main/tests/conformance/device_properties_test.cpp" line="98">
        <Original>
          count == expected
        </Original>
        <Expanded>
          8 == 1
        </Expanded>
        <Info>
          preset := "h200"
        </Info>
      </Expression>
      <OverallResultsAsserts successes="1" failures="1" test_case_success="false"/>
    </TestCase>
    <TestCase name="skipped as a whole" filename="faults_test.cpp" line="18">
      <Exception crash="false">
        skipped on this machine: injected faults exist in the simulator only
      </Exception>
      <OverallResultsAsserts successes="0" failures="0" test_case_success="false"/>
    </TestCase>
    <TestCase name="partly skipped loop" filename="peer_access_test.cpp" line="16">
      <Message type="WARNING" filename="conformance_support.h" line="97">
        <Text>
          skipped on this machine: preset pcie-4: needs 4 GPUs (pcie-4); this machine has 1
        </Text>
        <Info>
          preset := "pcie-4"
        </Info>
      </Message>
      <OverallResultsAsserts successes="2" failures="0" test_case_success="true"/>
    </TestCase>
    <TestCase name="loop with every preset skipped" filename="peer_access_test.cpp" line="33">
      <Message type="WARNING" filename="conformance_support.h" line="97">
        <Text>
          skipped on this machine: preset h200: the h200 machine has 1 GPU(s) and this machine shows 8
        </Text>
      </Message>
      <Message type="WARNING" filename="conformance_support.h" line="97">
        <Text>
          skipped on this machine: preset hgx-h200-8: needs GPUs 0 and 1 to be peers (hgx-h200-8)
        </Text>
      </Message>
      <OverallResultsAsserts successes="0" failures="0" test_case_success="true"/>
    </TestCase>
    <TestCase name="subcases" filename="peer_access_test.cpp" line="136">
      <SubCase name="PCIe without P2P" filename="peer_access_test.cpp" line="137">
        <Expression success="false" type="REQUIRE" filename="peer_access_test.cpp" line="140">
          <Original>
            enabled
          </Original>
          <Expanded>
            false
          </Expanded>
        </Expression>
      </SubCase>
      <SubCase name="across NVLink islands" filename="peer_access_test.cpp" line="142">
      </SubCase>
      <OverallResultsAsserts successes="3" failures="1" test_case_success="false"/>
    </TestCase>
    <TestCase name="threw" filename="memory_test.cpp" line="20">
      <Exception crash="false">
        std::bad_alloc
      </Exception>
      <OverallResultsAsserts successes="1" failures="0" test_case_success="false"/>
    </TestCase>
    <TestCase name="filtered out" filename="memory_test.cpp" line="30" skipped="true"/>
    <TestCase name="cudaEventQuery answers &quot;600&quot; &lt;busy&gt; &amp; more" filename="events_test.cpp" line="50">
      <OverallResultsAsserts successes="4" failures="0" test_case_success="true"/>
    </TestCase>
  </TestSuite>
  <OverallResultsAsserts successes="13" failures="2"/>
  <OverallResultsTestCases successes="4" failures="3" skipped="1"/>
</doctest>
)";

// As doctest writes a skip thrown in a subcase after a failing check in an earlier one: a stand-in
// inside the subcase the skip left, the skip itself at the level of the case, no later subcase.
inline constexpr const char* kSkipBesideFailure = R"(<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="conformance-example">
  <TestSuite>
    <TestCase name="two subcases" filename="peer_access_test.cpp" line="121">
      <SubCase name="past the last device" filename="peer_access_test.cpp" line="122">
        <Expression success="false" type="CHECK" filename="peer_access_test.cpp" line="124">
          <Original>
            cudaDeviceEnablePeerAccess(8, 0) == cudaErrorInvalidDevice
          </Original>
          <Expanded>
            0 == 101
          </Expanded>
        </Expression>
      </SubCase>
      <SubCase name="one GPU" filename="peer_access_test.cpp" line="126">
        <Exception crash="false">
          exception thrown in subcase - will translate later when the whole test case has been exited (cannot translate while there is an active exception)
        </Exception>
      </SubCase>
      <Exception crash="false">
        skipped on this machine: the h200 machine has 1 GPU(s) and this machine shows 8
      </Exception>
      <OverallResultsAsserts successes="0" failures="1" test_case_success="false"/>
    </TestCase>
  </TestSuite>
  <OverallResultsAsserts successes="0" failures="1"/>
  <OverallResultsTestCases successes="0" failures="1"/>
</doctest>
)";

inline constexpr const char* kCutShortReport = R"(<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="conformance-example">
  <TestSuite>
    <TestCase name="first" filename="example_test.cpp" line="10">
      <OverallResultsAsserts successes="1" failures="0" test_case_success="true"/>
    </TestCase>
    <TestCase name="second" filename="example_test.cpp" line="20">
      <Exception crash="true">
        SIGSEGV - Segmentation violation signal
      </Exception>
)";

// A CaseSkipped thrown inside assertions' expressions (doctest quotes it), and one thrown out of a
// subcase (doctest first writes a stand-in inside the subcase, then the exception at case level).
inline constexpr const char* kSkipsThroughAssertionsAndSubcases = R"(<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="conformance-example">
  <TestSuite>
    <TestCase name="schedules in a loop" filename="schedules_test.cu" line="111">
      <Expression success="false" type="CHECK" filename="schedules_test.cu" line="117">
        <Original>
          matches(copy_then_compute(schedule, true), expected)
        </Original>
        <Exception>
          "skipped on this machine: the lazy schedule reorders device work in the simulator only"
        </Exception>
        <Info>
          schedule := lazy
        </Info>
      </Expression>
      <OverallResultsAsserts successes="12" failures="1" test_case_success="false"/>
    </TestCase>
    <TestCase name="a real failure beside a skipped assertion" filename="schedules_test.cu" line="120">
      <Expression success="false" type="CHECK" filename="schedules_test.cu" line="121">
        <Original>
          matches(copy_then_compute("lazy", true), expected)
        </Original>
        <Exception>
          "skipped on this machine: the lazy schedule reorders device work in the simulator only"
        </Exception>
      </Expression>
      <Expression success="false" type="CHECK" filename="schedules_test.cu" line="122">
        <Original>
          first == second
        </Original>
        <Expanded>
          false
        </Expanded>
      </Expression>
      <OverallResultsAsserts successes="0" failures="2" test_case_success="false"/>
    </TestCase>
    <TestCase name="skipped in a subcase" filename="peer_access_test.cpp" line="93">
      <SubCase name="valid pair that can peer" filename="peer_access_test.cpp" line="94">
        <Exception crash="false">
          exception thrown in subcase - will translate later when the whole test case has been exited (cannot translate while there is an active exception)
        </Exception>
      </SubCase>
      <Exception crash="false">
        skipped on this machine: needs 8 GPUs (hgx-h200-8); this machine has 1
      </Exception>
      <OverallResultsAsserts successes="0" failures="0" test_case_success="false"/>
    </TestCase>
  </TestSuite>
  <OverallResultsAsserts successes="12" failures="3"/>
  <OverallResultsTestCases successes="0" failures="3"/>
</doctest>
)";

}  // namespace validate_fixtures
