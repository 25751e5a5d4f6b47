//===- ExampleTest.cpp - tf.Example parsing and dataset specs -------------===//

#include "TestUtil.h"

#include "fastnn/data/DatasetSpec.h"

using namespace fastnn::data;
using namespace fastnn::data::test;

TEST(Example, EveryFeatureKindRoundTrips) {
  Example E;
  addBytesFeature(E, "b", {"x", std::string_view("\0\xff", 2), ""});
  addInt64Feature(E, "i", {0, -1, INT64_MAX, INT64_MIN});
  addFloatFeature(E, "f", {1.5f, -0.0f, 3.4e38f});
  addBytesFeature(E, "empty_bytes", {});
  std::string Wire = E.SerializeAsString();
  Example Back;
  ASSERT_TRUE(parseExample(Wire, Back).ok());
  const auto &M = Back.features().feature();
  ASSERT_EQ(M.size(), 4u);
  EXPECT_EQ(M.at("b").bytes_list().value(0), "x");
  EXPECT_EQ(M.at("b").bytes_list().value(1), std::string("\0\xff", 2));
  EXPECT_EQ(M.at("b").bytes_list().value(2), "");
  EXPECT_EQ(M.at("i").int64_list().value(2), INT64_MAX);
  EXPECT_EQ(M.at("i").int64_list().value(3), INT64_MIN);
  EXPECT_EQ(M.at("f").float_list().value(0), 1.5f);
  EXPECT_EQ(M.at("f").float_list().value(2), 3.4e38f);
  EXPECT_TRUE(M.at("empty_bytes").has_bytes_list());
}

TEST(Example, WireBytesMatchTensorFlow) {
  // tf.train.Example(features=tf.train.Features(feature={'a':
  //   tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}))
  //   .SerializeToString() == b'\n\x0c\n\n\n\x01a\x12\x05\x1a\x03\n\x01\x01'
  Example E;
  addInt64Feature(E, "a", {1});
  EXPECT_EQ(E.SerializeAsString(), std::string("\n\x0c\n\n\n\x01"
                                               "a\x12\x05\x1a\x03\n\x01\x01",
                                               14));
}

TEST(Example, GarbageIsAnError) {
  Example E;
  EXPECT_FALSE(parseExample("\xff\xff\xff\xff", E).ok());
}

TEST(DatasetSpec, Builtins) {
  DatasetSpec S;
  for (const char *N : {"mock", "cifar10", "mnist", "flowers"}) {
    ASSERT_TRUE(loadDatasetSpec(N, S).ok()) << N;
    EXPECT_EQ(S.ImageFeature, "image/encoded");
    EXPECT_EQ(S.LabelFeature, "image/class/label");
  }
  EXPECT_TRUE(S.Kind == ImageKind::Encoded);
  ASSERT_TRUE(loadDatasetSpec("mnist", S).ok());
  EXPECT_EQ(S.Height, 28);
  EXPECT_EQ(S.Channels, 1);
  ASSERT_TRUE(loadDatasetSpec("mock", S).ok());
  EXPECT_TRUE(S.Mock);
  Status E = loadDatasetSpec("imagenet-nope", S);
  EXPECT_FALSE(E.ok());
  EXPECT_NE(E.message().find("imagenet-nope"), std::string::npos);
}

TEST(DatasetSpec, TextFile) {
  DatasetSpec S;
  Status St = parseDatasetSpec("# floats in [0,1]\n"
                               "name = digits\n"
                               "image_feature = pixels\n"
                               "image_kind = float\n"
                               "label_feature = y\n"
                               "label_offset = -1\n"
                               "height = 2\nwidth = 2\nchannels = 1\n"
                               "float_scale = 255\n"
                               "num_classes = 3\n",
                               "digits.spec", S);
  ASSERT_TRUE(St.ok()) << St.message();
  EXPECT_EQ(S.Name, "digits");
  EXPECT_TRUE(S.Kind == ImageKind::FloatList);
  EXPECT_EQ(S.FloatScale, 255.0f);

  Example E;
  addFloatFeature(E, "pixels", {0, 0.25f, 0.5f, 1});
  addInt64Feature(E, "y", {3});
  SampleView V;
  ASSERT_TRUE(extractSample(E, S, V).ok());
  EXPECT_EQ(V.Label, 2);
  ASSERT_EQ(V.FloatCount, 4u);
  EXPECT_EQ(V.Floats[1], 0.25f);

  Example Bad;
  addFloatFeature(Bad, "pixels", {0, 1});
  St = extractSample(Bad, S, V);
  EXPECT_FALSE(St.ok());
  EXPECT_NE(St.message().find("has 2 floats"), std::string::npos);
  addInt64Feature(E, "y", {9}); // Appends: value(0) stays 3.
  Example OutOfRange;
  addFloatFeature(OutOfRange, "pixels", {0, 0, 0, 0});
  addInt64Feature(OutOfRange, "y", {9});
  EXPECT_FALSE(extractSample(OutOfRange, S, V).ok());
}

TEST(DatasetSpec, ErrorsNameFileAndLine) {
  DatasetSpec S;
  Status St = parseDatasetSpec("name = x\nimage_featur = y\n", "my.spec", S);
  ASSERT_FALSE(St.ok());
  EXPECT_EQ(St.message(), "my.spec:2: unknown key 'image_featur' (did you "
                          "mean 'image_feature'?)");
  St = parseDatasetSpec("height = -3\n", "my.spec", S);
  EXPECT_NE(St.message().find("my.spec:1: 'height' expects an integer"),
            std::string::npos);
  St = parseDatasetSpec("image_kind = raw\n", "my.spec", S);
  EXPECT_FALSE(St.ok());
  St = parseDatasetSpec("just words\n", "my.spec", S);
  EXPECT_NE(St.message().find("expected 'key = value'"), std::string::npos);
}

TEST(DatasetSpec, DefaultsLikeFixedLenFeature) {
  DatasetSpec S;
  ASSERT_TRUE(loadDatasetSpec("cifar10", S).ok());
  Example E;
  addBytesFeature(E, "image/encoded", {"abc"});
  SampleView V;
  ASSERT_TRUE(extractSample(E, S, V).ok());
  EXPECT_EQ(V.Label, 0);      // default_value=0
  EXPECT_EQ(V.Format, "png"); // default_value='png'
  Example None;
  Status St = extractSample(None, S, V);
  EXPECT_NE(St.message().find("no feature 'image/encoded'"), std::string::npos);
}
