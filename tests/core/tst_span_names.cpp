// Names people can read: demangled, shortened kernel names for display (span_names.h).
#include "span_names.h"

#include <QTest>

using namespace streamscope;

class TestSpanNames : public QObject {
    Q_OBJECT

private slots:
    void shortNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("expected");
        auto row = [](const char* tag, const char* name, const char* expected) {
            QTest::newRow(tag) << QString::fromUtf8(name) << QString::fromUtf8(expected);
        };
        // Kernel names as the PyTorch profiler recorded them on an H200 (tests/data/pytorch/two-streams-event.json).
        row("elementwise",
            "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
            "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
            "{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::"
            "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3})::{lambda(int)#1}>(int, "
            "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3})",
            "elementwise_kernel<\u2026>");
        row("vectorized",
            "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "
            "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "
            "at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<"
            "float> >, std::array<char*, 2ul>)",
            "vectorized_elementwise_kernel<\u2026>");
        row("cutlass",
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(cutlass_80_simt_sgemm_"
            "256x128_8x4_nn_align1::Params)",
            "Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>");
        // StreamScope's own spin kernel as CUPTI names it (mangled; tests/data/cupti/).
        row("mangled", "_ZN11streamscope7kernels50_GLOBAL__N__3cb45cfa_17_kernel_library_cu_2afcff7c10spinKernelEm",
            "spinKernel");
        row("cublas",
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_"
            "off_kernel__5x_cublas",
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgr\u2026");
        row("lesson op", "first 9", "first 9");
        row("aten op", "aten::mm", "aten::mm");
        row("api", "cudaLaunchKernel", "cudaLaunchKernel");
        row("operator", "void f<(anonymous namespace)::Op>(int)", "f<\u2026>");
        row("unbalanced", "void broken<int(", "broken<int(");
        row("empty", "", "");
    }
    void shortNames()
    {
        QFETCH(QString, name);
        QFETCH(QString, expected);
        QCOMPARE(QString::fromStdString(shortSpanName(name.toStdString())), expected);
    }

    void demangles()
    {
        QCOMPARE(QString::fromStdString(demangledName("_Z3fooi")), QStringLiteral("foo(int)"));
        QCOMPARE(QString::fromStdString(demangledName("_Znot-a-symbol")), QStringLiteral("_Znot-a-symbol"));
        QCOMPARE(QString::fromStdString(demangledName("plain")), QStringLiteral("plain"));
    }

    // The cut counts characters, not bytes: no UTF-8 sequence is split.
    void cutsAtCharacters()
    {
        const std::string s = shortSpanName("\u00e9\u00e9\u00e9\u00e9\u00e9", 3);
        QCOMPARE(QString::fromStdString(s), QStringLiteral("\u00e9\u00e9\u00e9\u2026"));
    }
};

QTEST_GUILESS_MAIN(TestSpanNames)
#include "tst_span_names.moc"
